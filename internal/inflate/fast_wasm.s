//go:build wasm && !kwire_purego

#include "textflag.h"

// The fast decode loop of compressed blocks (see fast_wasm.go and
// fastCodesGeneric). Registers, all i64:
//
//	R0  d      where the next output byte goes
//	R2  s      the next input byte
//	R3  slast  the last input address an 8-byte refill may start at
//	R4  dlast  the last output address a symbol may start at (room for a
//	           longest match and fastSlack scratch bytes after it)
//	R5  bits   the bit buffer (the next bit lowest)
//	R6  nbits  how many of its bits are input
//	R7  lit    the literal/length fast table
//	R8  dist   the distance fast table
//	R9  low    the lowest address a match may copy from (the stream's start)
//	R10 e      a table entry (see inflate.go)
//	R11 n      a match's length
//	R12 tn     nbits as a symbol's codes are looked at, before they count
//	R14 t      bits likewise
//	R15 back   a match's distance
//	R1, R13    scratch (R13: extra-bit counts, then a match's end)
//
// A symbol's codes are all looked at (t, tn) before any bit is consumed; one
// that the loop does not decode (a long code, the end of the block, an invalid
// symbol, a distance too far back) ends it with the state before that symbol.

// ENTRY(TABLE, BITS) loads the fast-table entry of TABLE at the low fastBits
// (10) bits of BITS into R10.
#define ENTRY(TABLE, BITS) \
	Get TABLE; Get BITS; I64Const $1023; I64And; I64Const $2; I64Shl; I64Add; I32WrapI64; I64Load32U $0; Set R10

// TAKECODE drops the entry's code from t and tn.
#define TAKECODE \
	Get R14; Get R10; I64Const $15; I64And; I64ShrU; Set R14; \
	Get R12; Get R10; I64Const $15; I64And; I64Sub; Set R12

// EXTRA(DST) reads the entry's extra bits from t, adds its base, and leaves the
// sum in DST; t and tn drop the extra bits.
#define EXTRA(DST) \
	Get R10; I64Const $4; I64ShrU; I64Const $15; I64And; Set R13; \
	Get R10; I64Const $16; I64ShrU; \
	Get R14; I64Const $1; Get R13; I64Shl; I64Const $1; I64Sub; I64And; \
	I64Add; Set DST; \
	Get R14; Get R13; I64ShrU; Set R14; \
	Get R12; Get R13; I64Sub; Set R12

// NOTBASE leaves true when R10 is not a length or distance entry of the table
// (kind bits 8-9 not 0, or no code).
#define NOTBASE \
	Get R10; I64Const $0x300; I64And; I64Const $0; I64Ne; \
	Get R10; I64Const $15; I64And; I64Eqz; I32Or

// func fastCodesKernel(out, src []byte, st *fastState, lit, dist *[1024]uint32, start int)
TEXT ·fastCodesKernel(SB), NOSPLIT, $0-80
	MOVD st+48(FP), R1
	MOVD out_base+0(FP), R0
	MOVD src_base+24(FP), R2
	MOVD lit+56(FP), R7
	MOVD dist+64(FP), R8
	MOVD start+72(FP), R9
	MOVD out_len+8(FP), R4
	MOVD src_len+32(FP), R3

	Get R0
	Get R9
	I64Add
	Set R9 // low
	Get R0
	Get R4
	I64Add
	I64Const $274 // maxMatch + fastSlack
	I64Sub
	Set R4 // dlast
	Get R2
	Get R3
	I64Add
	I64Const $8 // fastInput
	I64Sub
	Set R3 // slast
	Get R1
	I32WrapI64
	I64Load $0
	Set R5
	Get R1
	I32WrapI64
	I64Load $8
	Set R6
	Get R2
	Get R1
	I32WrapI64
	I64Load $16
	I64Add
	Set R2
	Get R0
	Get R1
	I32WrapI64
	I64Load $24
	I64Add
	Set R0

	// The comparisons are signed: slast and dlast are below the buffers'
	// starts when the buffers are short.
	Block
	Loop
		Get R2
		Get R3
		I64GtS
		BrIf $1
		Get R0
		Get R4
		I64GtS
		BrIf $1

		// Refill: bits |= 8 input bytes << nbits; s += (63-nbits)/8; nbits |= 56.
		Get R5
		Get R2
		I32WrapI64
		I64Load $0
		Get R6
		I64Shl
		I64Or
		Set R5
		Get R2
		I64Const $63
		Get R6
		I64Sub
		I64Const $3
		I64ShrU
		I64Add
		Set R2
		Get R6
		I64Const $56
		I64Or
		Set R6

		ENTRY(R7, R5)
		Get R10
		I64Const $0x300
		I64And
		I64Const $0x100
		I64Eq
		If // literals, while a code's worth of bits is left
			Loop
				Get R5
				Get R10
				I64Const $15
				I64And
				I64ShrU
				Set R5
				Get R6
				Get R10
				I64Const $15
				I64And
				I64Sub
				Set R6
				Get R0
				I32WrapI64
				Get R10
				I64Const $16
				I64ShrU
				I64Store8 $0
				Get R0
				I64Const $1
				I64Add
				Set R0
				Get R6
				I64Const $10 // fastBits
				I64LtU
				BrIf $2
				ENTRY(R7, R5)
				Get R10
				I64Const $0x300
				I64And
				I64Const $0x100
				I64Eq
				BrIf $0
			End
			Br $1
		End
		NOTBASE
		BrIf $1

		// A length, then a distance.
		Get R5
		Set R14
		Get R6
		Set R12
		TAKECODE
		EXTRA(R11)
		ENTRY(R8, R14)
		NOTBASE
		BrIf $1
		TAKECODE
		EXTRA(R15)
		Get R15
		Get R0
		Get R9
		I64Sub
		I64GtU
		BrIf $1 // before the stream's start
		Get R14
		Set R5
		Get R12
		Set R6

		// Copy n bytes from d-back to d, repeating where they overlap.
		Get R0
		Get R15
		I64Sub
		Set R1 // from
		Get R0
		Get R11
		I64Add
		Set R13 // end
		Get R15
		I64Const $8
		I64GeU
		If
			Get R15
			Get R11
			I64GeU
			Get R11
			I64Const $32
			I64GtU
			I32And
			If // apart, and long: one memory.copy
				Get R0
				I32WrapI64
				Get R1
				I32WrapI64
				Get R11
				I32WrapI64
				MemoryCopy
			Else // 8 bytes at a time, each from bytes already final; up to 7 written past the end
				Loop
					Get R0
					I32WrapI64
					Get R1
					I32WrapI64
					I64Load $0
					I64Store $0
					Get R1
					I64Const $8
					I64Add
					Set R1
					Get R0
					I64Const $8
					I64Add
					Tee R0
					Get R13
					I64LtU
					BrIf $0
				End
			End
		Else
			Get R15
			I64Const $1
			I64Eq
			If // one byte repeated
				Get R0
				I32WrapI64
				Get R1
				I32WrapI64
				I32Load8U $0
				Get R11
				I32WrapI64
				MemoryFill
			Else // a period of 2 to 7: byte by byte
				Loop
					Get R0
					I32WrapI64
					Get R1
					I32WrapI64
					I64Load8U $0
					I64Store8 $0
					Get R1
					I64Const $1
					I64Add
					Set R1
					Get R0
					I64Const $1
					I64Add
					Tee R0
					Get R13
					I64LtU
					BrIf $0
				End
			End
		End
		Get R13
		Set R0
		Br $0
	End
	End

	// Give back the whole bytes read ahead; store the state.
	MOVD st+48(FP), R1
	MOVD src_base+24(FP), R3
	MOVD out_base+0(FP), R4
	Get R2
	Get R6
	I64Const $3
	I64ShrU
	I64Sub
	Get R3
	I64Sub
	Set R2
	Get R6
	I64Const $7
	I64And
	Set R6
	Get R1
	I32WrapI64
	Get R5
	I64Const $1
	Get R6
	I64Shl
	I64Const $1
	I64Sub
	I64And
	I64Store $0
	Get R1
	I32WrapI64
	Get R6
	I64Store $8
	Get R1
	I32WrapI64
	Get R2
	I64Store $16
	Get R1
	I32WrapI64
	Get R0
	Get R4
	I64Sub
	I64Store $24
	RET
