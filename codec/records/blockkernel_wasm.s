//go:build wasm && !kwire_purego

#include "textflag.h"

// LZ4 and snappy block decoding loops (see blockkernel_wasm.go). Both kernels
// keep addresses in i64 registers:
//
//	R0  d     where the next output byte goes
//	R1  dend  the end of the output that may be decoded (checks)
//	R13 room  the end of the memory that may be written over (overshoot)
//	R2  s     the next input byte
//	R3  send  the end of the input
//	R4  low   the lowest address a copy may read from
//	R5  the token or tag
//	R6  n     the length of a literal run or a copy
//	R7  off   the offset of a copy
//	R9  (LZ4) where the block's output starts
//	R12 the result
//
// R8, R10, R11, R14, R15 are scratch. Every length and offset is checked
// before anything is moved: a bad one ends the kernel with its "refused"
// result, and the Go code decodes the block again with the plain-Go decoder
// for the error.

// LITCOPY moves n bytes from s to d: two 8-byte moves when n <= 16 and 16
// bytes may be read at s and written at d (the bytes past n are written over
// by what follows or lie past the output), else memory.copy.
#define LITCOPY \
	Get R6; I64Const $16; I64LeU; \
	Get R3; Get R2; I64Sub; I64Const $16; I64GeU; I32And; \
	Get R13; Get R0; I64Sub; I64Const $16; I64GeU; I32And; \
	If; \
		Get R0; I32WrapI64; Get R2; I32WrapI64; I64Load $0; I64Store $0; \
		Get R0; I32WrapI64; Get R2; I32WrapI64; I64Load $8; I64Store $8; \
	Else; \
		Get R0; I32WrapI64; Get R2; I32WrapI64; Get R6; I32WrapI64; MemoryCopy; \
	End

// COPY8 moves 8 bytes at a time from SRC to R0 until R15 (d+n) is passed,
// writing at most 7 bytes past it. Each load reads only bytes already final
// when SRC <= d-8, or when one move covers the copy.
#define COPY8(SRC) \
	Get R0; Set R10; Get SRC; Set R14; \
	Loop; \
		Get R10; I32WrapI64; Get R14; I32WrapI64; I64Load $0; I64Store $0; \
		Get R10; I64Const $8; I64Add; Set R10; \
		Get R14; I64Const $8; I64Add; Set R14; \
		Get R10; Get R15; I64LtU; BrIf $0; \
	End

// DOUBLING repeats the off bytes before d up to R15 exactly, with memory.copy:
// the source stays at d-off and the run copied doubles each time, so source
// and destination never overlap.
#define DOUBLING \
	Get R0; Set R10; Get R7; Set R14; \
	Loop; \
		Get R10; I32WrapI64; Get R8; I32WrapI64; \
		Get R15; Get R10; I64Sub; Tee R11; Get R14; Get R11; Get R14; I64LtU; Select; Tee R11; \
		I32WrapI64; MemoryCopy; \
		Get R10; Get R11; I64Add; Set R10; \
		Get R14; Get R11; I64Add; Set R14; \
		Get R10; Get R15; I64LtU; BrIf $0; \
	End

// MATCHCOPY writes n bytes at d repeating those off bytes back, byte-wise
// repeat semantics where they overlap (off < n). It writes at most 15 bytes
// past d+n, and only where room allows. The most frequent case first: off >=
// 8 and n <= 16, two 8-byte moves (the second reads what the first wrote when
// off < 16).
#define MATCHCOPY \
	Get R0; Get R7; I64Sub; Set R8; \
	Get R7; I64Const $8; I64GeU; \
	Get R6; I64Const $16; I64LeU; I32And; \
	Get R13; Get R0; I64Sub; I64Const $16; I64GeU; I32And; \
	If; \
		Get R0; I32WrapI64; Get R8; I32WrapI64; I64Load $0; I64Store $0; \
		Get R0; I32WrapI64; Get R8; I32WrapI64; I64Load $8; I64Store $8; \
	Else; \
	MATCHLONG; \
	End

// MATCHLONG is MATCHCOPY past its first case.
#define MATCHLONG \
	Get R0; Get R6; I64Add; Set R15; \
	Get R7; Get R6; I64GeU; \
	If; \
		Get R6; I64Const $64; I64LeU; \
		Get R13; Get R15; I64Sub; I64Const $8; I64GeU; I32And; \
		If; \
			COPY8(R8); \
		Else; \
			Get R0; I32WrapI64; Get R8; I32WrapI64; Get R6; I32WrapI64; MemoryCopy; \
		End; \
	Else; \
		Get R7; I64Const $8; I64GeU; \
		If; \
			Get R13; Get R15; I64Sub; I64Const $8; I64GeU; \
			If; \
				COPY8(R8); \
			Else; \
				DOUBLING; \
			End; \
		Else; \
			Get R7; I64Const $1; I64Eq; \
			If; \
				Get R0; I32WrapI64; Get R8; I32WrapI64; I32Load8U $0; Get R6; I32WrapI64; MemoryFill; \
			Else; \
				Get R13; Get R15; I64Sub; I64Const $8; I64GeU; \
				If; \
					PATTERN; \
				Else; \
					DOUBLING; \
				End; \
			End; \
		End; \
	End

// PATTERN: 2 <= off < 8, off < n, room for 8 bytes past d+n. The first 8
// bytes one at a time, then 8-byte moves from P back, P the least multiple of
// off that is >= 8 (the output repeats with period P too).
#define PATTERN \
	Get R0; Set R10; \
	Get R0; I64Const $8; I64Add; Set R14; \
	Loop; \
		Get R10; I32WrapI64; Get R10; Get R7; I64Sub; I32WrapI64; I32Load8U $0; I32Store8 $0; \
		Get R10; I64Const $1; I64Add; Tee R10; Get R14; I64LtU; BrIf $0; \
	End; \
	Get R7; Set R11; \
	Loop; \
		Get R11; I64Const $8; I64LtU; \
		If; \
			Get R11; Get R7; I64Add; Set R11; \
			Br $1; \
		End; \
	End; \
	Get R14; Get R15; I64LtU; \
	If; \
		Get R14; Set R10; Get R14; Get R11; I64Sub; Set R14; \
		Loop; \
			Get R10; I32WrapI64; Get R14; I32WrapI64; I64Load $0; I64Store $0; \
			Get R10; I64Const $8; I64Add; Set R10; \
			Get R14; I64Const $8; I64Add; Set R14; \
			Get R10; Get R15; I64LtU; BrIf $0; \
		End; \
	End

// LZ4LEN adds the extra length bytes at s to n; used at depth 3 below the
// kernel's outer block (If, sequence Loop, Block).
#define LZ4LEN \
	Loop; \
		Get R2; Get R3; I64GeU; BrIf $3; \
		Get R2; I32WrapI64; I64Load8U $0; Tee R8; \
		Get R6; I64Add; Set R6; \
		Get R2; I64Const $1; I64Add; Set R2; \
		Get R6; I64Const $0x40000000; I64GtU; BrIf $3; \
		Get R8; I64Const $255; I64Eq; BrIf $0; \
	End

// func lz4DecodeKernel(buf []byte, base, start int, src []byte) int
TEXT ·lz4DecodeKernel(SB), NOSPLIT, $0-72
	MOVD buf_base+0(FP), R9
	MOVD buf_len+8(FP), R1
	MOVD base+24(FP), R4
	MOVD start+32(FP), R0
	MOVD src_base+40(FP), R2
	MOVD src_len+48(FP), R3

	Get R9
	Get R1
	I64Add
	Tee R1
	Set R13 // LZ4 may write over all of buf
	Get R9
	Get R4
	I64Add
	Set R4
	Get R9
	Get R0
	I64Add
	Tee R0
	Set R9 // R9: buf[start], for the result
	Get R2
	Get R3
	I64Add
	Set R3
	I64Const $-1
	Set R12

	Block
	Loop // one sequence; s < send here
		Get R2
		I32WrapI64
		I64Load8U $0
		Set R5
		Get R2
		I64Const $1
		I64Add
		Set R2

		// Literals.
		Get R5
		I64Const $4
		I64ShrU
		Tee R6
		I64Const $15
		I64Eq
		If
			LZ4LEN
		End
		Get R6
		Get R3
		Get R2
		I64Sub
		I64GtU
		BrIf $1 // past the input
		Get R6
		Get R1
		Get R0
		I64Sub
		I64GtU
		BrIf $1 // past the room
		LITCOPY
		Get R0
		Get R6
		I64Add
		Set R0
		Get R2
		Get R6
		I64Add
		Tee R2
		Get R3
		I64Eq
		If // the last sequence, literals only
			Get R5
			I64Const $15
			I64And
			I64Eqz
			If
				Get R0
				Get R9
				I64Sub
				Set R12
			End
			Br $2
		End

		// Match.
		Get R3
		Get R2
		I64Sub
		I64Const $2
		I64LtU
		BrIf $1 // offset truncated
		Get R2
		I32WrapI64
		I64Load16U $0
		Set R7
		Get R2
		I64Const $2
		I64Add
		Set R2
		Get R7
		I64Eqz
		BrIf $1 // offset 0
		Get R7
		Get R0
		Get R4
		I64Sub
		I64GtU
		BrIf $1 // before base
		Get R5
		I64Const $15
		I64And
		I64Const $4
		I64Add
		Tee R6
		I64Const $19
		I64Eq
		If
			LZ4LEN
		End
		Get R6
		Get R1
		Get R0
		I64Sub
		I64GtU
		BrIf $1 // past the room
		Get R2
		Get R3
		I64Eq
		BrIf $1 // the block ends in a match
		MATCHCOPY
		Get R0
		Get R6
		I64Add
		Set R0
		Br $0
	End
	End

	Get SP
	Get R12
	I64Store ret+64(FP)
	RET

// func snappyDecodeKernel(dst, src []byte, s int) bool
TEXT ·snappyDecodeKernel(SB), NOSPLIT, $0-57
	MOVD dst_base+0(FP), R4
	MOVD dst_len+8(FP), R1
	MOVD dst_cap+16(FP), R13
	MOVD src_base+24(FP), R2
	MOVD src_len+32(FP), R3
	MOVD s+48(FP), R8

	Get R4
	Get R1
	I64Add
	Set R1
	Get R4
	Get R13
	I64Add
	Set R13
	Get R2
	Get R3
	I64Add
	Set R3
	Get R2
	Get R8
	I64Add
	Set R2
	Get R4
	Set R0
	I64Const $0
	Set R12

	Block
	Loop // one element
		Get R2
		Get R3
		I64GeU
		If // the end of the input: the output must be full
			Get R0
			Get R1
			I64Eq
			I64ExtendI32U
			Set R12
			Br $2
		End
		Get R2
		I32WrapI64
		I64Load8U $0
		Tee R5
		I64Const $3
		I64And
		Tee R8
		I64Eqz
		If // literal
			Get R5
			I64Const $2
			I64ShrU
			Set R6
			Get R2
			I64Const $1
			I64Add
			Set R2
			Get R6
			I64Const $60
			I64GeU
			If // length-1 in the next 1..4 bytes
				Get R6
				I64Const $59
				I64Sub
				Set R10
				Get R3
				Get R2
				I64Sub
				Get R10
				I64LtU
				BrIf $3 // truncated
				I64Const $0
				Set R6
				Get R2
				Get R10
				I64Add
				Set R14
				Loop
					Get R14
					I64Const $1
					I64Sub
					Set R14
					Get R6
					I64Const $8
					I64Shl
					Get R14
					I32WrapI64
					I64Load8U $0
					I64Or
					Set R6
					Get R14
					Get R2
					I64GtU
					BrIf $0
				End
				Get R2
				Get R10
				I64Add
				Set R2
			End
			Get R6
			I64Const $1
			I64Add
			Tee R6
			Get R1
			Get R0
			I64Sub
			I64GtU
			BrIf $2 // past the declared length
			Get R6
			Get R3
			Get R2
			I64Sub
			I64GtU
			BrIf $2 // past the input
			LITCOPY
			Get R0
			Get R6
			I64Add
			Set R0
			Get R2
			Get R6
			I64Add
			Set R2
			Br $1
		End

		// Copies.
		Get R8
		I64Const $1
		I64Eq
		If // 1-byte offset: length 4 + bits 2..4, offset bits 5..7 << 8 | next byte
			Get R3
			Get R2
			I64Sub
			I64Const $2
			I64LtU
			BrIf $2 // truncated
			Get R5
			I64Const $2
			I64ShrU
			I64Const $7
			I64And
			I64Const $4
			I64Add
			Set R6
			Get R5
			I64Const $5
			I64ShrU
			I64Const $8
			I64Shl
			Get R2
			I32WrapI64
			I64Load8U $1
			I64Or
			Set R7
			Get R2
			I64Const $2
			I64Add
			Set R2
		Else // length 1 + bits 2..7
			Get R5
			I64Const $2
			I64ShrU
			I64Const $1
			I64Add
			Set R6
			Get R8
			I64Const $2
			I64Eq
			If // 2-byte offset
				Get R3
				Get R2
				I64Sub
				I64Const $3
				I64LtU
				BrIf $3 // truncated
				Get R2
				I32WrapI64
				I64Load16U $1
				Set R7
				Get R2
				I64Const $3
				I64Add
				Set R2
			Else // 4-byte offset
				Get R3
				Get R2
				I64Sub
				I64Const $5
				I64LtU
				BrIf $3 // truncated
				Get R2
				I32WrapI64
				I64Load32U $1
				Set R7
				Get R2
				I64Const $5
				I64Add
				Set R2
			End
		End
		Get R7
		I64Eqz
		BrIf $1 // offset 0
		Get R7
		Get R0
		Get R4
		I64Sub
		I64GtU
		BrIf $1 // before the output
		Get R6
		Get R1
		Get R0
		I64Sub
		I64GtU
		BrIf $1 // past the declared length
		MATCHCOPY
		Get R0
		Get R6
		I64Add
		Set R0
		Br $0
	End
	End

	Get SP
	Get R12
	I64Store8 ret+56(FP)
	RET
