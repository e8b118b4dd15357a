;; abi2: reports ABI version 2 (-> Boot fails).
(module
  (memory (export "memory") 2)
  (func (export "fx_alloc") (param i32) (result i32) (i32.const 65536))
  (func (export "fx_abi_version") (result i32) (i32.const 2))
  (func (export "fx_handle") (param i32 i32) (result i64) (i64.const 0)))
