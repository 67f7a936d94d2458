#!/bin/sh
# Installs the real git servers the sync tests run against (openssh-server for
# git over SSH; nginx and fcgiwrap in front of `git http-backend` for smart
# HTTP), when they are missing, the machine is Debian-like and we are root.
# Never fails: without root, apt or the network it says what to install and
# `make test` goes on (the tests that need a server skip with the same line).
# Packages are installed without starting their services (nothing listens on
# port 22 or 80 afterwards): the tests start their own, on loopback.
# Chromium and its driver are for the browser tests of `jp serve`.
set -u
HINT="apt-get install openssh-server nginx fcgiwrap chromium chromium-driver"
TIMEOUT="${JP_SERVERS_INSTALL_TIMEOUT:-600}"

have() { [ -x /usr/sbin/sshd ] && command -v nginx >/dev/null 2>&1 && command -v fcgiwrap >/dev/null 2>&1 && [ -x /usr/bin/chromedriver ]; }
# nginx and fcgiwrap live in /usr/sbin, which a user's PATH may lack
PATH="$PATH:/usr/sbin:/sbin"

if have; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "note: the SSH and HTTP sync tests and the browser tests will skip; to run them: $HINT" >&2
    exit 0
fi
echo "installing the test servers and browser: openssh-server nginx fcgiwrap chromium chromium-driver (apt-get, up to ${TIMEOUT}s)" >&2
policy=/usr/sbin/policy-rc.d
made_policy=""
if [ ! -e "$policy" ]; then
    # keep the packages' own services from starting (on ports 22 and 80)
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=1
fi
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
ok=1
timeout "$TIMEOUT" apt-get -qq update >"$log" 2>&1 || ok=""
if [ -n "$ok" ]; then
    timeout "$TIMEOUT" apt-get -qq install -y --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        openssh-server nginx fcgiwrap chromium chromium-driver >>"$log" 2>&1 || ok=""
fi
[ -n "$made_policy" ] && rm -f "$policy"
if [ -z "$ok" ] || ! have; then
    echo "note: could not install the test servers (last lines of apt-get below); the SSH and HTTP sync tests will skip; to run them: $HINT" >&2
    tail -n 3 "$log" >&2
fi
rm -f "$log"
exit 0
