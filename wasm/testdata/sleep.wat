;; sleep: fx_handle calls WASI poll_oneoff itself, then answers 200 "woke".
;; The first body byte picks the subscriptions: "c" one relative clock of
;; 30 s (wazero serves it with the module's Nanosleep, which the host caps
;; at the call's deadline, so this must end as a timeout, never "woke");
;; "s" that clock and an fd_read on stdin (wazero then polls stdin instead
;; of sleeping; the host gives the guest an empty stdin, always ready, so
;; this answers at once). Any other body answers at once without polling.
;; A subscription is 48 bytes: userdata u64 @0, tag u8 @8 (0 clock,
;; 1 fd_read), then the union @16: clock {id u32 @16, timeout u64 @24,
;; precision u64 @32, flags u16 @40}, fd_read {fd u32 @16}.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff"
    (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; fx_alloc: the host buffer lives at 64 KiB; grow memory to fit n bytes.
  (func (export "fx_alloc") (param $n i32) (result i32)
    (local $need i32)
    (local.set $need (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $need) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $need) (memory.size))) (i32.const -1))
          (then (return (i32.const 0))))))
    (i32.const 65536))
  (func (export "fx_abi_version") (result i32) (i32.const 1))
  (data (i32.const 1024) "{\"status\":200,\"body\":\"woke\"}")
  (func (export "fx_handle") (param $p i32) (param $n i32) (result i64)
    (local $blen i32) (local $op i32) (local $nsubs i32)
    (local.set $blen (i32.load (i32.add (local.get $p) (i32.const 20))))
    (if (i32.gt_u (local.get $blen) (i32.const 0))
      (then (local.set $op (i32.load8_u
        (i32.sub (i32.add (local.get $p) (local.get $n)) (local.get $blen))))))
    ;; subscription 0 at 2048: a relative clock (CLOCK_MONOTONIC) of 30 s
    (i64.store (i32.const 2048) (i64.const 1))
    (i32.store8 (i32.const 2056) (i32.const 0))
    (i32.store (i32.const 2064) (i32.const 1))
    (i64.store (i32.const 2072) (i64.const 30000000000))
    (i64.store (i32.const 2080) (i64.const 0))
    (i32.store16 (i32.const 2088) (i32.const 0))
    ;; subscription 1 at 2096: fd_read on stdin (fd 0)
    (i64.store (i32.const 2096) (i64.const 2))
    (i32.store8 (i32.const 2104) (i32.const 1))
    (i32.store (i32.const 2112) (i32.const 0))
    (if (i32.eq (local.get $op) (i32.const 99)) ;; "c"
      (then (local.set $nsubs (i32.const 1))))
    (if (i32.eq (local.get $op) (i32.const 115)) ;; "s"
      (then (local.set $nsubs (i32.const 2))))
    (if (i32.gt_u (local.get $nsubs) (i32.const 0))
      (then
        ;; events at 3072, the event count at 4096
        (if (i32.ne (call $poll_oneoff (i32.const 2048) (i32.const 3072) (local.get $nsubs) (i32.const 4096))
                    (i32.const 0))
          (then unreachable))))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 28))))
