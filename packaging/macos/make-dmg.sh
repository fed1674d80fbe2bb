#!/usr/bin/env bash
# Wrap "dist/Attention Explorer.app" into dist/AttentionExplorer-<version>-macos-<arch>.dmg.
#
#   python packaging/build.py bundle          # makes dist/Attention Explorer.app (on macOS)
#   bash packaging/macos/make-dmg.sh [VERSION]
#
# Uses create-dmg (brew install create-dmg) for the usual drag-to-Applications window when
# it is installed, plain hdiutil (always on macOS) otherwise. Signing: PyInstaller signs the
# app ad hoc (enough for Apple Silicon to run it); with AE_CODESIGN_IDENTITY set at build
# time it signs with that Developer ID instead, and AE_NOTARY_PROFILE (a `xcrun notarytool
# store-credentials` profile) makes this script notarize and staple the .dmg.
set -euo pipefail
cd "$(dirname "$0")/../.."

APP_NAME="Attention Explorer"
APP="dist/${APP_NAME}.app"
VERSION="${1:-$(python3 -c 'import sys; sys.path.insert(0, "packaging"); import bundle_config as c; print(c.app_version())')}"
ARCH="$(uname -m)"
DMG="dist/AttentionExplorer-${VERSION}-macos-${ARCH}.dmg"

[ -d "$APP" ] || { echo "make-dmg: $APP not found; run python packaging/build.py bundle first" >&2; exit 1; }
rm -f "$DMG"

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
ditto "$APP" "$STAGE/${APP_NAME}.app"

if command -v create-dmg >/dev/null 2>&1; then
    create-dmg \
        --volname "${APP_NAME} ${VERSION}" \
        --volicon "assets/icons/attention-explorer.icns" \
        --window-size 560 360 --icon-size 112 \
        --icon "${APP_NAME}.app" 140 170 \
        --app-drop-link 420 170 \
        --hdiutil-quiet \
        "$DMG" "$STAGE/"
else
    ln -s /Applications "$STAGE/Applications"
    hdiutil create -volname "${APP_NAME} ${VERSION}" -srcfolder "$STAGE" -ov -format UDZO \
        -imagekey zlib-level=9 "$DMG"
fi

if [ -n "${AE_NOTARY_PROFILE:-}" ]; then
    xcrun notarytool submit "$DMG" --keychain-profile "$AE_NOTARY_PROFILE" --wait
    xcrun stapler staple "$DMG"
fi
hdiutil verify "$DMG"
ls -l "$DMG"
