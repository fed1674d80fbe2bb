#!/bin/sh
# /usr/bin/attention-explorer: starts the Attention Explorer bundle installed in /opt.
# Found relative to this script, so an unpacked copy (dpkg -x into any folder) works too.
# Usage: attention-explorer [gui|export|inspect|selftest|bench] ...   (see --help)
here=$(dirname "$(readlink -f "$0")")
app="$here/../../opt/attention-explorer/attention-explorer"
if [ ! -x "$app" ]; then
    echo "attention-explorer: the program is missing ($app); reinstall the attention-explorer package" >&2
    exit 1
fi
exec "$app" "$@"
