#!/usr/bin/env bash
# Installs what the JavaScript binding's build, tests and benchmark need, on a fresh
# Debian machine as root with no stdin; quick when everything is already there.
#   - Node >= 20 (checked, not installed: Debian 12's nodejs is 18)
#   - the npm dev dependencies of package-lock.json into bindings/js/node_modules
#     (typescript, playwright-core, kafkajs; playwright never downloads a browser)
#   - Debian's chromium for the headless browser test
set -euo pipefail
cd "$(dirname "$0")"

node -e 'const [M] = process.versions.node.split(".").map(Number); if (M < 20) { console.error("bindings/js needs Node >= 20, found " + process.version); process.exit(1); }'

if ! command -v chromium >/dev/null 2>&1; then
	echo "bindings/js: installing Debian's chromium"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends chromium
fi

# npm ci only when package-lock.json changed since the last install.
stamp=node_modules/.kwire-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	echo "bindings/js: npm ci"
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error </dev/null
	echo "$want" > "$stamp"
fi
echo "bindings/js: node $(node --version), $(chromium --version 2>/dev/null | awk "NR==1"), node_modules ready"
