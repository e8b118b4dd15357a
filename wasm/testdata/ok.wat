;; ok: a healthy guest. _initialize sets $ready; fx_handle traps unless it
;; ran, which proves the host calls _initialize. Answers a fixed response.
(module
  (memory (export "memory") 2)
  (global $ready (mut i32) (i32.const 0))
  (func (export "_initialize") (global.set $ready (i32.const 1)))
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
  (data (i32.const 1024) "{\"status\":200,\"headers\":{\"content-type\":\"text/plain; charset=utf-8\",\"x-guest\":[\"wat\",\"ok\"]},\"body\":\"hello from wat\"}")
  (func (export "fx_handle") (param i32 i32) (result i64)
    (if (i32.eqz (global.get $ready)) (then unreachable))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 116))))
