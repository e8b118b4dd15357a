;; mirror: answers the request body verbatim as the WasmResponse, so a test
;; can send any response document through the real ABI. A body starting
;; with "!" traps; one starting with "~" loops forever. The body is the last
;; body_len bytes of the request; body_len is the u32 at offset 20.
(module
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
  (func (export "fx_handle") (param $p i32) (param $n i32) (result i64)
    (local $blen i32) (local $body i32)
    (local.set $blen (i32.load (i32.add (local.get $p) (i32.const 20))))
    (local.set $body (i32.sub (i32.add (local.get $p) (local.get $n)) (local.get $blen)))
    (if (i32.gt_u (local.get $blen) (i32.const 0))
      (then
        (if (i32.eq (i32.load8_u (local.get $body)) (i32.const 33)) (then unreachable))
        (if (i32.eq (i32.load8_u (local.get $body)) (i32.const 126))
          (then (loop $forever (br $forever))))))
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $body)) (i64.const 32))
      (i64.extend_i32_u (local.get $blen)))))
