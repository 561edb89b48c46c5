//go:build amd64

#include "textflag.h"

// STREAM kernels on 256-bit vectors, in two kinds that differ only in the
// store instruction:
//   *AVX  ordinary (write-allocate) stores, VMOVUPD, as a compiler makes of
//         STREAM's C loops: for arrays that fit in the last-level cache;
//   *NT   non-temporal (streaming) stores, VMOVNTPD: the target lines are
//         written around the caches, without the read a write-allocate
//         store costs. For arrays far larger than the last-level cache this
//         is what the C library's large copies and a loop compiled for
//         bandwidth do; for arrays in the cache it is wrong (the next kernel
//         finds them gone). dst must be 32-byte aligned; SFENCE orders the
//         streaming stores before the function returns.
// Each processes len(dst) rounded down to a multiple of 16 elements; the
// caller does the rest. The loop bodies are macros over the store.

#define STORE4(ST) \
	ST Y0, 0(DI); \
	ST Y1, 32(DI); \
	ST Y2, 64(DI); \
	ST Y3, 96(DI)

#define COPY16(ST) \
	VMOVUPD 0(SI), Y0; \
	VMOVUPD 32(SI), Y1; \
	VMOVUPD 64(SI), Y2; \
	VMOVUPD 96(SI), Y3; \
	STORE4(ST); \
	ADDQ $128, SI; \
	ADDQ $128, DI

#define SCALE16(ST) \
	VMULPD 0(SI), Y15, Y0; \
	VMULPD 32(SI), Y15, Y1; \
	VMULPD 64(SI), Y15, Y2; \
	VMULPD 96(SI), Y15, Y3; \
	STORE4(ST); \
	ADDQ $128, SI; \
	ADDQ $128, DI

#define ADD16(ST) \
	VMOVUPD 0(SI), Y0; \
	VMOVUPD 32(SI), Y1; \
	VMOVUPD 64(SI), Y2; \
	VMOVUPD 96(SI), Y3; \
	VADDPD 0(DX), Y0, Y0; \
	VADDPD 32(DX), Y1, Y1; \
	VADDPD 64(DX), Y2, Y2; \
	VADDPD 96(DX), Y3, Y3; \
	STORE4(ST); \
	ADDQ $128, SI; \
	ADDQ $128, DX; \
	ADDQ $128, DI

// triad: dst = b + q*c with b in SI, c in DX.
#define TRIAD16(ST) \
	VMULPD 0(DX), Y15, Y0; \
	VMULPD 32(DX), Y15, Y1; \
	VMULPD 64(DX), Y15, Y2; \
	VMULPD 96(DX), Y15, Y3; \
	VADDPD 0(SI), Y0, Y0; \
	VADDPD 32(SI), Y1, Y1; \
	VADDPD 64(SI), Y2, Y2; \
	VADDPD 96(SI), Y3, Y3; \
	STORE4(ST); \
	ADDQ $128, SI; \
	ADDQ $128, DX; \
	ADDQ $128, DI

// func copyAVX(dst, src []float64)
TEXT ·copyAVX(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	SHRQ $4, CX
	JZ   done

loop:
	COPY16(VMOVUPD)
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func copyNT(dst, src []float64)
TEXT ·copyNT(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	SHRQ $4, CX
	JZ   done

loop:
	COPY16(VMOVNTPD)
	DECQ CX
	JNZ  loop

done:
	SFENCE
	VZEROUPPER
	RET

// func scaleAVX(dst, src []float64, q float64)
TEXT ·scaleAVX(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         src_base+24(FP), SI
	VBROADCASTSD q+48(FP), Y15
	SHRQ         $4, CX
	JZ           done

loop:
	SCALE16(VMOVUPD)
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func scaleNT(dst, src []float64, q float64)
TEXT ·scaleNT(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         src_base+24(FP), SI
	VBROADCASTSD q+48(FP), Y15
	SHRQ         $4, CX
	JZ           done

loop:
	SCALE16(VMOVNTPD)
	DECQ CX
	JNZ  loop

done:
	SFENCE
	VZEROUPPER
	RET

// func addAVX(dst, a, b []float64)
TEXT ·addAVX(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	SHRQ $4, CX
	JZ   done

loop:
	ADD16(VMOVUPD)
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func addNT(dst, a, b []float64)
TEXT ·addNT(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	SHRQ $4, CX
	JZ   done

loop:
	ADD16(VMOVNTPD)
	DECQ CX
	JNZ  loop

done:
	SFENCE
	VZEROUPPER
	RET

// func triadAVX(dst, b, c []float64, q float64)
TEXT ·triadAVX(SB), NOSPLIT, $0-80
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         b_base+24(FP), SI
	MOVQ         c_base+48(FP), DX
	VBROADCASTSD q+72(FP), Y15
	SHRQ         $4, CX
	JZ           done

loop:
	TRIAD16(VMOVUPD)
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func triadNT(dst, b, c []float64, q float64)
TEXT ·triadNT(SB), NOSPLIT, $0-80
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         b_base+24(FP), SI
	MOVQ         c_base+48(FP), DX
	VBROADCASTSD q+72(FP), Y15
	SHRQ         $4, CX
	JZ           done

loop:
	TRIAD16(VMOVNTPD)
	DECQ CX
	JNZ  loop

done:
	SFENCE
	VZEROUPPER
	RET
