;; sleepinit: _initialize sleeps 30 s through WASI poll_oneoff (one relative
;; clock subscription), so instantiation must end at its bound (the larger
;; of Config.Timeout and 5 s) instead of after the sleep.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "_initialize")
    ;; subscription at 2048: userdata 1, tag 0 (clock), id 1 (monotonic),
    ;; timeout 30 s, precision 0, flags 0 (relative)
    (i64.store (i32.const 2048) (i64.const 1))
    (i32.store8 (i32.const 2056) (i32.const 0))
    (i32.store (i32.const 2064) (i32.const 1))
    (i64.store (i32.const 2072) (i64.const 30000000000))
    (i64.store (i32.const 2080) (i64.const 0))
    (i32.store16 (i32.const 2088) (i32.const 0))
    (drop (call $poll_oneoff (i32.const 2048) (i32.const 3072) (i32.const 1) (i32.const 4096))))
  (func (export "fx_alloc") (param i32) (result i32) (i32.const 65536))
  (func (export "fx_abi_version") (result i32) (i32.const 1))
  (func (export "fx_handle") (param i32 i32) (result i64) unreachable))
