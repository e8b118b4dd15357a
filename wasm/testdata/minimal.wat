;; minimal: the guest shown in ABI.md section 7 (TestABIExample keeps them equal).
(module
  (memory (export "memory") 2)
  (func (export "fx_abi_version") (result i32) (i32.const 1))
  ;; the request buffer lives at 64 KiB, growing memory as needed
  (func (export "fx_alloc") (param $n i32) (result i32)
    (local $need i32)
    (local.set $need (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $need) (memory.size))
      (then (if (i32.eq (memory.grow (i32.sub (local.get $need) (memory.size))) (i32.const -1))
        (then (return (i32.const 0))))))
    (i32.const 65536))
  (data (i32.const 1024) "{\"status\":200,\"body\":\"hi\"}")
  (func (export "fx_handle") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 26))))
