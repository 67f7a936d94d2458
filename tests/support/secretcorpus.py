"""Made-up secrets in the shapes real ones have, one or more per kind the scanner
knows (docs/security.md), each in the context a session shows it in.

None of these is a real credential: each was typed or generated for this file.
``PLANTED`` maps a kind to (context text, the value that must never travel).
"""

from __future__ import annotations

PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu9kq3VZr7mXbQ2pLw8sT4nYf6cJ1hG5dK0eR3tU7iO9pA2sD\n"
    "4fG6hJ8kL1zX3cV5bN7mQ9wE2rT4yU6iO8pA1sD3fG5hJ7kL9zX2cV4bN6mQ8wE1\n"
    "-----END RSA PRIVATE KEY-----"
)

PLANTED: dict[str, tuple[str, str]] = {
    "private key": (f"$ cat ~/.ssh/id_rsa\n{PRIVATE_KEY}\n", "MIIEowIBAAKCAQEAu9kq3VZr7mXbQ2pLw8sT4nYf6cJ1hG5dK0eR3tU7iO9pA2sD"),
    "aws access key id": ("aws_access_key_id = AKIAQX7Z2M4N6P8R3T5V\n", "AKIAQX7Z2M4N6P8R3T5V"),
    "aws secret access key": (
        "aws_secret_access_key = k9Zq2Xw7Vb4Nm1Lp8Rt6Yh3Jd5Fg0Sa2Qe7Wc9Ub\n",
        "k9Zq2Xw7Vb4Nm1Lp8Rt6Yh3Jd5Fg0Sa2Qe7Wc9Ub",
    ),
    "github token": ("remote: token ghp_Z8y7X6w5V4u3T2s1R0q9P8o7N6m5L4k3J2h1 ok", "ghp_Z8y7X6w5V4u3T2s1R0q9P8o7N6m5L4k3J2h1"),
    "gitlab token": ("GITLAB=glpat-Qw3Er5Ty7Ui9Op1As3Df", "glpat-Qw3Er5Ty7Ui9Op1As3Df"),
    "anthropic api key": (
        "export ANTHROPIC_API_KEY=sk-ant-api03-Xq7Lm2Np9Rt4Vw6Yz8Ab1Cd3Ef5Gh7Ij9Kl2Mn4Op6Qr8St0Uv-AAA\n",
        "sk-ant-api03-Xq7Lm2Np9Rt4Vw6Yz8Ab1Cd3Ef5Gh7Ij9Kl2Mn4Op6Qr8St0Uv-AAA",
    ),
    "openai api key": (
        "client = OpenAI(api_key='sk-proj-4Tz9Qw2Er7Ty5Ui3Op1As8Df6Gh4Jk2Lz0Xc9Vb7Nm5')",
        "sk-proj-4Tz9Qw2Er7Ty5Ui3Op1As8Df6Gh4Jk2Lz0Xc9Vb7Nm5",
    ),
    "openrouter api key": (
        "key: sk-or-v1-" + "3f9a" * 16,
        "sk-or-v1-" + "3f9a" * 16,
    ),
    "slack token": ("SLACK_BOT=xoxb-2837465019-9182736450-Zq8Wx7Cv6Bn5", "xoxb-2837465019-9182736450-Zq8Wx7Cv6Bn5"),
    "slack webhook": (
        "curl -X POST https://hooks.slack.com/services/T0ABC1234/B0DEF5678/Xy9Zq8Wv7Ut6Sr5Qp4On",
        "Xy9Zq8Wv7Ut6Sr5Qp4On",
    ),
    "discord webhook": (
        "url=https://discord.com/api/webhooks/123456789012345678/Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9Cd1Ef3Gh",
        "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Ab9Cd1Ef3Gh",
    ),
    "stripe key": ("stripe.api_key = \"sk_live_4eC39HqLyjWDarjtT1zdp7dcXz\"", "sk_live_4eC39HqLyjWDarjtT1zdp7dcXz"),
    "google api key": ("?key=AIzaSyQ7x9Zk2Lm4Np6Rt8Vw0Yb1Cd3Ef5Gh7Ij", "AIzaSyQ7x9Zk2Lm4Np6Rt8Vw0Yb1Cd3Ef5Gh7Ij"),
    "google oauth client secret": ("\"client_secret\": \"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t\"", "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t"),
    "npm token": ("//registry.npmjs.org/:_authToken=npm_Zx9Cv8Bn7Mq6Wr5Et4Yu3Io2Pa1Sd0Fg9Hj8K", "npm_Zx9Cv8Bn7Mq6Wr5Et4Yu3Io2Pa1Sd0Fg9Hj8K"),
    "pypi token": (
        "password = pypi-AgEIcHlwaS5vcmcCJDQ5ZTcxYjZhLTk4ZjMtNGIxZC1hMmQ0LWM3ZTU1OWQ3ZjhhYQ",
        "pypi-AgEIcHlwaS5vcmcCJDQ5ZTcxYjZhLTk4ZjMtNGIxZC1hMmQ0LWM3ZTU1OWQ3ZjhhYQ",
    ),
    "hugging face token": ("HF_TOKEN=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", "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"),
    "sendgrid api key": (
        "SG.Ab1Cd2Ef3Gh4Ij5Kl6Mn7O.Pq8Rs9Tu0Vw1Xy2Za3Bc4De5Fg6Hi7Jk8Lm9No0Pq1Rs2Tu",
        "SG.Ab1Cd2Ef3Gh4Ij5Kl6Mn7O.Pq8Rs9Tu0Vw1Xy2Za3Bc4De5Fg6Hi7Jk8Lm9No0Pq1Rs2Tu",
    ),
    "digitalocean token": ("doctl auth init -t dop_v1_" + "a7c3" * 16, "dop_v1_" + "a7c3" * 16),
    "shopify token": ("X-Shopify-Access-Token: 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", "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"),
    "databricks token": ("DATABRICKS_HOST=x dapi0a1b2c3d4e5f60718293a4b5c6d7e8f9", "dapi0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    "telegram bot token": ("bot 5829301746:AAHq7Xw2Ez9Rt4Yu6Io8Pa1Sd3Fg5Hj7Kl9Z", "5829301746:AAHq7Xw2Ez9Rt4Yu6Io8Pa1Sd3Fg5Hj7Kl9Z"),
    "azure storage key": (
        "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=" + "Zq8Wx7Cv6Bn5Ml4Kj3Hg2Fd1Sa0Po9Iu8Yt7Re6Wq5Ez4Xc3Vb2Nm1Lk0Jh9Gf8Ds7Aq6Sw5De4Fr3Gt2Hy1Ju0Ki9Lo8" + "==;",
        "Zq8Wx7Cv6Bn5Ml4Kj3Hg2Fd1Sa0Po9Iu8Yt7Re6Wq5Ez4Xc3Vb2Nm1Lk0Jh9Gf8Ds7Aq6Sw5De4Fr3Gt2Hy1Ju0Ki9Lo8",
    ),
    "jwt": (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0.q8Zx7Cv6Bn5Ml4Kj3Hg2Fd1Sa0Po9Iu",
        "eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIn0",
    ),
    "password in url": ("mongodb+srv://svc:Tr0ub4dor-3x@cluster0.example.net/app", "Tr0ub4dor-3x"),
    "env secret": ("STRIPE_WEBHOOK_SECRET=whsec_9fK2mQ7xL4pZ8vR1", "whsec_9fK2mQ7xL4pZ8vR1"),
}


# -- the corpus planted in other tools' sessions and in a JP conversation ------------

SESSION_ID = "5ec7e75c-0000-4000-8000-00000000cafe"
ROLLOUT_ID = "019e5ec7-0000-7000-8000-00000000beef"


def _values(kinds: list[str]) -> list[str]:
    return [PLANTED[k][0] for k in kinds]


def _cc(uuid: int, parent: int | None, kind: str, message: dict[str, object]) -> str:
    import json

    record = {
        "parentUuid": f"u-{parent:03d}" if parent else None, "isSidechain": False,
        "userType": "external", "cwd": "/home/me/app", "sessionId": SESSION_ID,
        "version": "2.1.39", "gitBranch": "main", "type": kind, "message": message,
        "uuid": f"u-{uuid:03d}", "timestamp": f"2026-03-01T10:00:{uuid:02d}.000Z",
    }  # fmt: skip
    return json.dumps(record)


def claude_code_session(root: object) -> list[str]:
    """A Claude Code project under ``root`` whose prompt, thinking, answer, a shell
    result, an MCP tool's result, a file read and the session's summary (its title)
    hold planted secrets; returns the kinds planted."""
    import json
    from pathlib import Path

    kinds = list(PLANTED)[:13]
    t = _values(kinds)
    lines = [
        _cc(1, None, "user", {"role": "user", "content": f"deploy with this key please: {t[0]}"}),
        _cc(2, 1, "assistant", {"role": "assistant", "model": "claude-opus-4-6", "id": "msg_1", "type": "message",
            "content": [{"type": "thinking", "thinking": f"the user gave {t[1]}", "signature": "sig-1"}]}),
        _cc(3, 2, "assistant", {"role": "assistant", "model": "claude-opus-4-6", "id": "msg_1", "type": "message",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": f"echo {t[2]}"}}]}),
        _cc(4, 3, "user", {"role": "user", "content": [
            {"tool_use_id": "toolu_1", "type": "tool_result", "content": f"{t[3]}\n{t[4]}", "is_error": False}]}),
        _cc(5, 4, "assistant", {"role": "assistant", "model": "claude-opus-4-6", "id": "msg_2", "type": "message",
            "content": [{"type": "tool_use", "id": "toolu_2", "name": "mcp__vault__read", "input": {"path": "prod"}}]}),
        _cc(6, 5, "user", {"role": "user", "content": [
            {"tool_use_id": "toolu_2", "type": "tool_result", "content": [{"type": "text", "text": f"{t[5]}\n{t[6]}"}],
             "is_error": False}]}),
        _cc(7, 6, "assistant", {"role": "assistant", "model": "claude-opus-4-6", "id": "msg_3", "type": "message",
            "content": [{"type": "tool_use", "id": "toolu_3", "name": "Read", "input": {"file_path": "/home/me/app/.env"}}]}),
        _cc(8, 7, "user", {"role": "user", "content": [
            {"tool_use_id": "toolu_3", "type": "tool_result", "content": f"{t[7]}\n{t[8]}\n{t[9]}", "is_error": False}]}),
        _cc(9, 8, "assistant", {"role": "assistant", "model": "claude-opus-4-6", "id": "msg_4", "type": "message",
            "content": [{"type": "text", "text": f"Done; I used {t[10]} and {t[11]}."}]}),
        json.dumps({"type": "summary", "summary": f"Deploying with {t[12]}", "leafUuid": "u-009"}),
    ]  # fmt: skip
    folder = Path(str(root)) / "-home-me-app"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{SESSION_ID}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return kinds


def codex_home(root: object) -> list[str]:
    """A Codex home under ``root`` whose prompt, reasoning, a shell call and its output,
    a patch and the answer hold planted secrets; returns the kinds planted."""
    import json
    from pathlib import Path

    kinds = list(PLANTED)[13:]
    t = _values(kinds)

    def rec(n: int, kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": f"2026-03-02T08:00:{n:02d}.000Z", "type": kind, "payload": payload})

    lines = [
        rec(1, "session_meta", {"id": ROLLOUT_ID, "timestamp": "2026-03-02T08:00:00.000Z", "cwd": "/home/me/app",
            "originator": "codex_cli_rs", "cli_version": "0.125.0", "instructions": None, "model_provider": "openai"}),
        rec(2, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"use {t[0]}"}]}),
        rec(3, "event_msg", {"type": "user_message", "message": f"use {t[0]}", "images": []}),
        rec(4, "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**{t[1]}**"}],
            "content": None, "encrypted_content": "gAAAA=="}),
        rec(5, "response_item", {"type": "function_call", "name": "shell", "call_id": "call_1",
            "arguments": json.dumps({"command": ["bash", "-lc", f"curl -H '{t[2]}'"]})}),
        rec(6, "response_item", {"type": "function_call_output", "call_id": "call_1",
            "output": json.dumps({"output": f"{t[3]}\n{t[4]}\n{t[5]}", "metadata": {"exit_code": 0}})}),
        rec(7, "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_2",
            "name": "apply_patch", "input": f"*** Begin Patch\n*** Add File: cfg.txt\n+{t[6]}\n+{t[7]}\n*** End Patch"}),
        rec(8, "response_item", {"type": "custom_tool_call_output", "call_id": "call_2", "output": f"Success. {t[8]}"}),
        rec(9, "event_msg", {"type": "agent_message", "message": f"Saved {t[9]}; {t[10]} {t[11]}"}),
        rec(10, "response_item", {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": f"Saved {t[9]}; {t[10]} {t[11]}"}]}),
        rec(11, "event_msg", {"type": "agent_message", "message": f"{t[12]}"}),
        rec(12, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"{t[12]}"}]}),
    ]  # fmt: skip
    folder = Path(str(root)) / "sessions" / "2026" / "03" / "02"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"rollout-2026-03-02T08-00-00-{ROLLOUT_ID}.jsonl"
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return kinds


def leaky_jp(folder: object, kind: str = "aws secret access key", *, attachment: str = "") -> object:
    """A JP folder of 2 turns whose first tool result printed a planted secret (and
    whose first request attached a file holding another, when ``attachment`` names
    its kind)."""
    import base64
    import json
    from pathlib import Path

    from tests.e2e.harness import write_conversation

    path = write_conversation(Path(str(folder)), 2, tools_every=1)
    events = json.loads((path / "events.json").read_text())
    result = next(e for e in events if e["type"] == "tool_call_response")
    result["content"] = base64.b64encode(PLANTED[kind][0].encode()).decode()
    if attachment:
        request = next(e for e in events if e["type"] == "chat_request")
        request["attachments"] = [{"kind": "file", "source": "notes.txt", "content": PLANTED[attachment][0]}]
    (path / "events.json").write_text(json.dumps(events))
    return path
