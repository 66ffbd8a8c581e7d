// Warp-level tensor-core primitives shared by the attention kernels: ldmatrix from
// shared memory and mma.sync m16n8k16 (bf16 in, fp32 accumulate), sm_80+.
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), lane = 4 g + t:
//   A (16x16, row), 4 registers of 2 bf16: a[0] (g, 2t..2t+1), a[1] (g+8, 2t..),
//     a[2] (g, 2t+8..), a[3] (g+8, 2t+8..).
//   B (16x8, col), 2 registers: b[0] (k 2t..2t+1, n g), b[1] (k 2t+8.., n g).
//   C/D (16x8 f32), 4 floats: c[0], c[1] (g, 2t..2t+1); c[2], c[3] (g+8, 2t..2t+1).
// ldmatrix.x4: lane 8 m + r gives the address of row r of 8x8 matrix m; register m
// of lane 4 r + t receives row r, columns 2t..2t+1 of matrix m (.trans: row 2t..2t+1
// of column r, i.e. of the transposed matrix). The lower 16 bits hold the element
// with the smaller column. ldmatrix clobbers "memory" so that it stays ordered
// with the plain shared-memory stores around it.
#pragma once

#include <cstdint>

namespace trainsim::kernels::attention_detail {

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row_address))
               : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row_address))
               : "memory");
}

// d += a b for one 16x8 tile.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                               std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace trainsim::kernels::attention_detail
