# Source this file from the root of a clone of fx (bash, zsh or sh):
#
#	. scripts/modproxy/env.sh
#
# It builds a file proxy of the working tree and exports, for this shell,
# what the go command needs to use it from a module outside the clone
# (`go run ./scripts/modproxy env` prints it; docs/modules.md says what).
# Sourcing it again, after changing the clone, rebuilds the proxy: the go
# command that runs modproxy is given back the workspace, the default
# module cache and GOFLAGS without -mod=mod, which the exports of an
# earlier run would otherwise refuse it ("main module does not contain
# package"). When modproxy fails, nothing is exported, the reason is
# printed, and the `.` returns 1.
fx_modproxy_flags=
for fx_modproxy_f in ${GOFLAGS-}; do
	[ "$fx_modproxy_f" = -mod=mod ] || fx_modproxy_flags="$fx_modproxy_flags $fx_modproxy_f"
done
if fx_modproxy_env=$(GOWORK= GOMODCACHE= GOFLAGS="$fx_modproxy_flags" go run ./scripts/modproxy env) &&
	[ -n "$fx_modproxy_env" ]; then
	eval "$fx_modproxy_env"
	unset fx_modproxy_env fx_modproxy_flags fx_modproxy_f
else
	unset fx_modproxy_env fx_modproxy_flags fx_modproxy_f
	echo "scripts/modproxy/env.sh: modproxy env failed (run it from the root of the clone); nothing exported" >&2
	return 1 2>/dev/null || exit 1
fi
