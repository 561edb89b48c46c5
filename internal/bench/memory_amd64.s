//go:build amd64

#include "textflag.h"

// STREAM kernels on 256-bit vectors with ordinary (write-allocate) stores,
// as a compiler makes of STREAM's C loops: non-temporal stores would report
// more than the plain loops do and stop comparing with STREAM figures.
// Each processes len(dst) rounded down to a multiple of 16 elements; the
// caller does the rest.

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
