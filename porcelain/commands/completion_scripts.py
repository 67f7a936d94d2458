"""The scripts `jp completion SHELL` prints: each asks `jp` itself for the
words (`jp completion SHELL --complete -- WORDS... CURRENT`), reads the reply
line by line into the shell's list of completions (never through `eval`), and
completes file names when the reply is the file marker."""

from __future__ import annotations

from pathlib import Path

from porcelain.commands.completer import FILES

BASH = """\
# jp completion for bash.  Install: jp completion bash --install
# (or: eval "$(jp completion bash)" in ~/.bashrc)
_jp_complete() {
    local cur=${COMP_WORDS[COMP_CWORD]} line
    local -a found=()
    while IFS= read -r line; do
        found+=("$line")
    done < <(jp completion bash --complete -- "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null)
    if [[ ${#found[@]} -eq 1 && ${found[0]} == "@FILES@" ]]; then
        compopt -o default 2>/dev/null
        COMPREPLY=()
        return 0
    fi
    COMPREPLY=("${found[@]}")
}
complete -F _jp_complete jp
"""

ZSH = """\
#compdef jp
# jp completion for zsh.  Install: jp completion zsh --install
# (or: eval "$(jp completion zsh)" in ~/.zshrc, after compinit)
_jp() {
    local -a found
    found=(${(f)"$(jp completion zsh --complete -- "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)"})
    if [[ ${#found} -eq 1 && ${found[1]} == "@FILES@" ]]; then
        _files
        return
    fi
    (( ${#found} )) || return 1
    _describe -V 'jp' found
}
if [[ "${funcstack[1]}" == "_jp" ]]; then
    _jp "$@"
else
    compdef _jp jp
fi
"""

FISH = """\
# jp completion for fish.  Install: jp completion fish --install
# (or: jp completion fish | source)
function __jp_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l found (jp completion fish --complete -- $words (commandline -ct) 2>/dev/null)
    if test (count $found) -eq 1; and test "$found[1]" = "@FILES@"
        __fish_complete_path (commandline -ct)
        return
    end
    printf '%s\\n' $found
end
complete -c jp -f -a '(__jp_complete)'
"""

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH}


def script(shell: str) -> str:
    return SCRIPTS[shell].replace("@FILES@", FILES)


def install_path(shell: str, home: Path, data_home: Path, config_home: Path) -> Path:
    """Where each shell looks for a user's completion of `jp`."""
    if shell == "bash":
        return data_home / "bash-completion" / "completions" / "jp"
    if shell == "zsh":
        return home / ".zfunc" / "_jp"
    return config_home / "fish" / "completions" / "jp.fish"


AFTER_INSTALL = {
    "bash": "open a new shell (bash-completion loads it from there)",
    "zsh": "add `fpath=(~/.zfunc $fpath); autoload -Uz compinit; compinit` to ~/.zshrc "
    "(before any other compinit), then open a new shell",
    "fish": "open a new shell (fish loads it from there)",
}
