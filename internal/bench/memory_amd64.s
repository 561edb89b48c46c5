//go:build amd64

#include "textflag.h"

// STREAM kernels on 256-bit vectors with ordinary (write-allocate) stores,
// as a compiler makes of STREAM's C loops, for arrays that fit in the
// last-level cache. Each processes len(dst) rounded down to a multiple of 16
// elements; the caller does the rest.

// func copyAVX(dst, src []float64)
TEXT ·copyAVX(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	SHRQ $4, CX
	JZ   copydone

copyloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     copyloop

copydone:
	VZEROUPPER
	RET

// func scaleAVX(dst, src []float64, q float64)
TEXT ·scaleAVX(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         src_base+24(FP), SI
	VBROADCASTSD q+48(FP), Y15
	SHRQ         $4, CX
	JZ           scaledone

scaleloop:
	VMULPD  0(SI), Y15, Y0
	VMULPD  32(SI), Y15, Y1
	VMULPD  64(SI), Y15, Y2
	VMULPD  96(SI), Y15, Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     scaleloop

scaledone:
	VZEROUPPER
	RET

// func addAVX(dst, a, b []float64)
TEXT ·addAVX(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	SHRQ $4, CX
	JZ   adddone

addloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VADDPD  0(DX), Y0, Y0
	VADDPD  32(DX), Y1, Y1
	VADDPD  64(DX), Y2, Y2
	VADDPD  96(DX), Y3, Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	DECQ    CX
	JNZ     addloop

adddone:
	VZEROUPPER
	RET

// func triadAVX(dst, b, c []float64, q float64): dst = b + q*c
TEXT ·triadAVX(SB), NOSPLIT, $0-80
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         b_base+24(FP), SI
	MOVQ         c_base+48(FP), DX
	VBROADCASTSD q+72(FP), Y15
	SHRQ         $4, CX
	JZ           triaddone

triadloop:
	VMULPD  0(DX), Y15, Y0
	VMULPD  32(DX), Y15, Y1
	VMULPD  64(DX), Y15, Y2
	VMULPD  96(DX), Y15, Y3
	VADDPD  0(SI), Y0, Y0
	VADDPD  32(SI), Y1, Y1
	VADDPD  64(SI), Y2, Y2
	VADDPD  96(SI), Y3, Y3
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	DECQ    CX
	JNZ     triadloop

triaddone:
	VZEROUPPER
	RET

// The same kernels with non-temporal (streaming) stores: the destination
// lines are written around the caches, without the read that a
// write-allocate store costs. For arrays far larger than the last-level
// cache this is what the C library's memcpy does, and what a loop
// compiled for bandwidth does; it is wrong for arrays that fit in the cache
// (the next kernel would find them gone). dst must be 32-byte aligned;
// SFENCE orders the streaming stores before the function returns.

// func copyNT(dst, src []float64)
TEXT ·copyNT(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	SHRQ $4, CX
	JZ   copyntdone

copyntloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VMOVNTPD Y0, 0(DI)
	VMOVNTPD Y1, 32(DI)
	VMOVNTPD Y2, 64(DI)
	VMOVNTPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     copyntloop

copyntdone:
	SFENCE
	VZEROUPPER
	RET

// func scaleNT(dst, src []float64, q float64)
TEXT ·scaleNT(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         src_base+24(FP), SI
	VBROADCASTSD q+48(FP), Y15
	SHRQ         $4, CX
	JZ           scalentdone

scalentloop:
	VMULPD  0(SI), Y15, Y0
	VMULPD  32(SI), Y15, Y1
	VMULPD  64(SI), Y15, Y2
	VMULPD  96(SI), Y15, Y3
	VMOVNTPD Y0, 0(DI)
	VMOVNTPD Y1, 32(DI)
	VMOVNTPD Y2, 64(DI)
	VMOVNTPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     scalentloop

scalentdone:
	SFENCE
	VZEROUPPER
	RET

// func addNT(dst, a, b []float64)
TEXT ·addNT(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	SHRQ $4, CX
	JZ   addntdone

addntloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VADDPD  0(DX), Y0, Y0
	VADDPD  32(DX), Y1, Y1
	VADDPD  64(DX), Y2, Y2
	VADDPD  96(DX), Y3, Y3
	VMOVNTPD Y0, 0(DI)
	VMOVNTPD Y1, 32(DI)
	VMOVNTPD Y2, 64(DI)
	VMOVNTPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	DECQ    CX
	JNZ     addntloop

addntdone:
	SFENCE
	VZEROUPPER
	RET

// func triadNT(dst, b, c []float64, q float64): dst = b + q*c
TEXT ·triadNT(SB), NOSPLIT, $0-80
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         b_base+24(FP), SI
	MOVQ         c_base+48(FP), DX
	VBROADCASTSD q+72(FP), Y15
	SHRQ         $4, CX
	JZ           triadntdone

triadntloop:
	VMULPD  0(DX), Y15, Y0
	VMULPD  32(DX), Y15, Y1
	VMULPD  64(DX), Y15, Y2
	VMULPD  96(DX), Y15, Y3
	VADDPD  0(SI), Y0, Y0
	VADDPD  32(SI), Y1, Y1
	VADDPD  64(SI), Y2, Y2
	VADDPD  96(SI), Y3, Y3
	VMOVNTPD Y0, 0(DI)
	VMOVNTPD Y1, 32(DI)
	VMOVNTPD Y2, 64(DI)
	VMOVNTPD Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	DECQ    CX
	JNZ     triadntloop

triadntdone:
	SFENCE
	VZEROUPPER
	RET
