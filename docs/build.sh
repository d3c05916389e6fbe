#!/usr/bin/env bash
# Builds the documentation site (mdBook) into target/book/ and checks it as
# a reader meets it (docs/check_site.py): links and anchors, no link
# outside the book, and in headless Chromium at 1280 and 375 px wide no
# console error, no page wider than the window and no table overflowing
# without a scroll container; screenshots go to target/book-shots/.
# Installs what it needs when missing: mdBook through cargo, Debian's
# chromium through apt-get, websocket-client through pip.
set -euo pipefail
cd "$(dirname "$0")/.."
MDBOOK_VERSION=0.5.4
mdbook=$(command -v mdbook || echo "${CARGO_HOME:-$HOME/.cargo}/bin/mdbook")
if ! "$mdbook" --version 2>/dev/null | grep -q "v$MDBOOK_VERSION"; then
  echo "installing mdBook $MDBOOK_VERSION (cargo install)"
  cargo install mdbook --version "$MDBOOK_VERSION" --no-default-features --features search --locked --quiet
  mdbook="${CARGO_HOME:-$HOME/.cargo}/bin/mdbook"
fi
rm -rf target/book target/book-shots
"$mdbook" build docs
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  echo "installing chromium (apt-get)"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi
if ! python3 -c "import websocket" 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check websocket-client 2>&1 | tail -2 \
    || python3 -m pip install --quiet --break-system-packages websocket-client
fi
python3 docs/check_site.py target/book target/book-shots
echo "site: target/book/index.html"
