// Package deploytest runs a built server as real processes, one
// generation after another, for the deploy tests of fx (the root
// package's restart, hand-off and socket-activation tests, the websocket
// module's hand-off test): it copies the binary as a deploy does
// (ReplaceBinary), starts a generation and waits for the PID it writes
// once it serves (Deployed, WaitNewPID), hands the socket on with SIGHUP
// (Deployed.HandOff), waits for an old generation to exit (WaitGone), and
// keeps HTTP load on the address throughout (StartGetLoad), counting the
// answers by the process that served them.
//
// A deploy test builds a binary and runs seconds of load: it calls
// RequireDeployTest, which skips it unless FX_DEPLOY_TEST=1 (.ci/run's
// deploy block sets it). The helpers read /proc and send signals: they
// are built on Linux only. Only tests import it.
package deploytest
