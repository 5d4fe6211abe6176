//go:build amd64 && !purego

#include "textflag.h"

// func pairScanAVX2(p *byte, n, dist int, b1, b2, or byte) int
TEXT ·pairScanAVX2(SB), NOSPLIT, $0-40
	MOVQ    p+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    dist+16(FP), R10
	MOVBQZX b1+24(FP), AX
	MOVBQZX b2+25(FP), BX
	MOVBQZX or+26(FP), DX
	LEAQ    (SI)(R10*1), R11 // the second byte's row
	MOVQ    AX, X1
	VPBROADCASTB X1, Y1
	MOVQ    BX, X2
	VPBROADCASTB X2, Y2
	MOVQ    DX, X3
	VPBROADCASTB X3, Y3
	XORQ    DI, DI

loop:
	LEAQ    32(DI)(R10*1), R8
	CMPQ    R8, CX
	JHI     notfound
	VMOVDQU (SI)(DI*1), Y4
	VMOVDQU (R11)(DI*1), Y5
	VPOR    Y3, Y4, Y4
	VPOR    Y3, Y5, Y5
	VPCMPEQB Y1, Y4, Y4
	VPCMPEQB Y2, Y5, Y5
	VPAND   Y4, Y5, Y4
	VPMOVMSKB Y4, R9
	TESTL   R9, R9
	JNZ     found
	ADDQ    $32, DI
	JMP     loop

found:
	BSFL    R9, R9
	ADDQ    R9, DI
	MOVQ    DI, ret+32(FP)
	VZEROUPPER
	RET

notfound:
	MOVQ    $-1, ret+32(FP)
	VZEROUPPER
	RET
