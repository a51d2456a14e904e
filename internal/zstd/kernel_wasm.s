//go:build wasm && !kwire_purego

#include "textflag.h"

// The sequences kernel (see kernel_wasm.go). Addresses are kept as i64:
//
//	R0  d     where the next output byte goes
//	R1  bv    the bit container; its low bn bits are loaded and unread
//	R2  bn
//	R3  bp    the stream's bytes below bp are not loaded yet; below the
//	          stream's start it counts the zero bytes loaded as padding
//	R4  the literal length state, then its table entry's address
//	R5  the offset state, then its table entry's address
//	R6  the match length state, then its table entry's address
//	R7, R8, R9  the repeat offsets
//	R10 lp    the next literal
//	R11 the sequences left, this one included
//	R12 the offset value, then the offset
//	R13 the match length, then where the match ends
//	R14 the literal length, then scratch
//	R15 scratch
//
// Values used once a sequence live in the argument slots, some rewritten at
// the start: out_len holds the end of the room that may be written over,
// pos the end of what may be decoded (the room, or the block's 128 KiB),
// frameStart the lowest address a match may read, lits_len the end of the
// literals. Every length and offset is checked before anything is moved; a
// bad one ends the kernel with -1, and the Go code decodes the block again.
//
// A table entry is laid out as fseEntry: base (4 bytes), next (2), extra (1)
// and nb (1); the fields are loaded one by one, which takes fewer
// instructions than shifting them out of one 8-byte load.

#define ROOM out_len+8(FP)
#define LIMIT pos+24(FP)
#define LOW frameStart+32(FP)
#define LITEND lits_len+56(FP)

// STREAMSTART pushes the address of the bitstream's first byte.
#define STREAMSTART I64Load src_base+72(FP)

// FILL loads bytes until at least 56 bits are unread (bn < 56 on entry):
// whole bytes at once while 8 are left before the stream's start, else one
// at a time, zeros past the start.
#define FILL \
	Get R3; STREAMSTART; I64Sub; I64Const $8; I64GeS; \
	If; \
		I64Const $63; Get R2; I64Sub; I64Const $-8; I64And; Set R15; \
		Get R1; Get R15; I64Shl; \
		Get R3; I64Const $8; I64Sub; I32WrapI64; I64Load $0; I64Const $64; Get R15; I64Sub; I64ShrU; \
		I64Or; Set R1; \
		Get R3; Get R15; I64Const $3; I64ShrU; I64Sub; Set R3; \
		Get R2; Get R15; I64Add; Set R2; \
	Else; \
		Loop; \
			Get R3; I64Const $1; I64Sub; Set R3; \
			Get R1; I64Const $8; I64Shl; Set R1; \
			Get R3; STREAMSTART; I64GeS; \
			If; \
				Get R1; Get R3; I32WrapI64; I64Load8U $0; I64Or; Set R1; \
			End; \
			Get R2; I64Const $8; I64Add; Tee R2; I64Const $56; I64LtU; BrIf $0; \
		End; \
	End

// BITS pushes the next k bits, k in R15 (k < 64).
#define BITS \
	Get R2; Get R15; I64Sub; Set R2; \
	Get R1; Get R2; I64ShrU; \
	I64Const $1; Get R15; I64Shl; I64Const $1; I64Sub; I64And

// VALUE(E, T): T = the base of the entry at E plus its extra bits.
#define VALUE(E, T) \
	Get E; I32WrapI64; I64Load8U $6; Set R15; \
	Get E; I32WrapI64; I64Load32U $0; \
	BITS; \
	I64Add; Set T

// NEXT(E): E = the state after the entry at E: its next plus nb bits.
#define NEXT(E) \
	Get E; I32WrapI64; I64Load8U $7; Set R15; \
	Get E; I32WrapI64; I64Load16U $4; \
	BITS; \
	I64Add; Set E

// ENTRY(S, TAB): S = the address of state S's table entry.
#define ENTRY(S, TAB) \
	I64Load TAB; Get S; I64Const $511; I64And; I64Const $3; I64Shl; I64Add; Set S

// STATE(S, TAB): S = the first state, log bits (the byte after the table's
// 512 entries).
#define STATE(S, TAB) \
	I64Load TAB; I32WrapI64; I64Load8U $4096; Set R15; \
	BITS; Set S

// MOVE8(D, S, O) moves the 8 bytes at S+O to D+O.
#define MOVE8(D, S, O) \
	Get D; I32WrapI64; Get S; I32WrapI64; I64Load $O; I64Store $O

// func sequencesKernel(out []byte, pos, frameStart int, window uint64, lits, src []byte, nseq int, ll, of, ml *fseTable, reps *[3]int) int
TEXT ·sequencesKernel(SB), NOSPLIT, $0-144
	Get SP
	I64Const $-1
	I64Store ret+136(FP)

	// Absolute addresses in the argument slots.
	MOVD out_base+0(FP), R15
	Get SP
	Get R15
	I64Load pos+24(FP)
	I64Add
	Tee R0
	I64Store pos+24(FP) // the block's start, for now
	Get SP
	Get R15
	I64Load out_len+8(FP)
	I64Add
	Tee R14
	I64Store out_len+8(FP) // ROOM
	Get SP
	Get R0
	I64Const $131072 // maxBlockSize
	I64Add
	Tee R13
	Get R14
	Get R13
	Get R14
	I64LtU
	Select
	I64Store pos+24(FP) // LIMIT
	Get SP
	Get R15
	I64Load frameStart+32(FP)
	I64Add
	I64Store frameStart+32(FP) // LOW
	MOVD lits_base+48(FP), R10
	Get SP
	Get R10
	I64Load lits_len+56(FP)
	I64Add
	I64Store lits_len+56(FP) // LITEND
	MOVD nseq+96(FP), R11
	MOVD reps+128(FP), R15
	Get R15
	I32WrapI64
	I64Load $0
	Set R7
	Get R15
	I32WrapI64
	I64Load $8
	Set R8
	Get R15
	I32WrapI64
	I64Load $16
	Set R9

	Block
	// The bit reader: the last byte's highest 1 bit marks the stream's end.
	MOVD src_len+80(FP), R3
	Get R3
	I64Eqz
	BrIf $0
	MOVD src_base+72(FP), R15
	Get R15
	Get R3
	I64Add
	I64Const $1
	I64Sub
	Tee R3
	I32WrapI64
	I64Load8U $0
	Tee R1
	I64Eqz
	BrIf $0
	I64Const $63
	Get R1
	I64Clz
	I64Sub
	Set R2
	FILL
	STATE(R4, ll+104(FP))
	STATE(R5, of+112(FP))
	STATE(R6, ml+120(FP))

	Loop // one sequence
		ENTRY(R4, ll+104(FP))
		ENTRY(R5, of+112(FP))
		ENTRY(R6, ml+120(FP))
		// A fill leaves at least 56 bits: enough for the offset's (at
		// most 31) and the match length's (16) extra bits, then for the
		// literal length's (16) and the three state updates (9+9+8).
		Get R2
		I64Const $47
		I64LtU
		If
			FILL
		End
		VALUE(R5, R12)
		VALUE(R6, R13)
		Get R2
		I64Const $42
		I64LtU
		If
			FILL
		End
		VALUE(R4, R14)
		Get R11
		I64Const $1
		I64Ne
		If // not the last sequence
			NEXT(R4)
			NEXT(R6)
			NEXT(R5)
		End

		// The offset: a new one (value > 3), or a repeat offset.
		Get R12
		I64Const $3
		I64GtU
		If
			Get R8
			Set R9
			Get R7
			Set R8
			Get R12
			I64Const $3
			I64Sub
			Tee R12
			Set R7
		Else
			// Which repeat offset: value-1, one more with no literals.
			Get R12
			I64Const $1
			I64Sub
			Get R14
			I64Eqz
			I64ExtendI32U
			I64Add
			Tee R12
			I64Eqz
			If
				Get R7
				Set R12
			Else
				Get R12
				I64Const $1
				I64Eq
				If
					Get R8
					Set R12
					Get R7
					Set R8
					Get R12
					Set R7
				Else
					Get R12
					I64Const $2
					I64Eq
					If
						Get R9
						Set R12
					Else
						Get R7
						I64Const $1
						I64Sub
						Set R12
					End
					Get R8
					Set R9
					Get R7
					Set R8
					Get R12
					Set R7
				End
			End
		End

		// Checks before anything moves.
		Get R14
		I64Load LITEND
		Get R10
		I64Sub
		I64GtU
		BrIf $1 // more literals than are left
		Get R14
		Get R13
		I64Add
		I64Load LIMIT
		Get R0
		I64Sub
		I64GtU
		BrIf $1 // past the room or the block's 128 KiB

		// Literals, if any: two 8-byte moves when they are at most 16 and
		// 16 bytes may be read and written, else memory.copy.
		Get R14
		I64Eqz
		I32Eqz
		If
			Get R14
			I64Const $16
			I64LeU
			I64Load ROOM
			Get R0
			I64Sub
			I64Const $16
			I64GeU
			I32And
			I64Load LITEND
			Get R10
			I64Sub
			I64Const $16
			I64GeU
			I32And
			If
				MOVE8(R0, R10, 0)
				MOVE8(R0, R10, 8)
			Else
				Get R0
				I32WrapI64
				Get R10
				I32WrapI64
				Get R14
				I32WrapI64
				MemoryCopy
			End
			Get R0
			Get R14
			I64Add
			Set R0
			Get R10
			Get R14
			I64Add
			Set R10
		End

		// The match: its offset must reach no farther back than the frame's
		// start and the window (offset-1 wraps around for 0).
		Get R12
		I64Const $1
		I64Sub
		Get R0
		I64Load LOW
		I64Sub
		I64GeU
		Get R12
		I64Load window+40(FP)
		I64GtU
		I32Or
		BrIf $1
		Get R0
		Get R12
		I64Sub
		Set R14 // the match's source
		Get R12
		I64Const $8
		I64GeU
		Get R13
		I64Const $16
		I64LeU
		I32And
		I64Load ROOM
		Get R0
		I64Sub
		I64Const $16
		I64GeU
		I32And
		If
			// The most frequent case: two 8-byte moves (the second reads
			// what the first wrote when the offset is below 16).
			MOVE8(R0, R14, 0)
			MOVE8(R0, R14, 8)
			Get R0
			Get R13
			I64Add
			Set R0
		Else
			Get R0
			Get R13
			I64Add
			Set R13 // the match's end
			I64Load ROOM
			Get R13
			I64Sub
			I64Const $8
			I64GeU
			If // 8 bytes may be written past the end
				Get R12
				I64Const $8
				I64LtU
				If
					// Offsets 1 to 7: the first 8 bytes one at a time,
					// then 8-byte moves from P back, P the least multiple
					// of the offset that is at least 8 (the output repeats
					// with period P too).
					Get R0
					I64Const $8
					I64Add
					Set R15
					Loop
						Get R0
						I32WrapI64
						Get R0
						Get R12
						I64Sub
						I32WrapI64
						I32Load8U $0
						I32Store8 $0
						Get R0
						I64Const $1
						I64Add
						Tee R0
						Get R15
						I64LtU
						BrIf $0
					End
					Get R12
					Set R14
					Loop
						Get R14
						I64Const $8
						I64LtU
						If
							Get R14
							Get R12
							I64Add
							Set R14
							Br $1
						End
					End
					Get R0
					Get R14
					I64Sub
					Set R14
				End
				Get R0
				Get R13
				I64LtU
				If
					// 8 bytes at a time; each load reads only bytes
					// already final (the source is 8 or more back).
					Loop
						MOVE8(R0, R14, 0)
						Get R0
						I64Const $8
						I64Add
						Set R0
						Get R14
						I64Const $8
						I64Add
						Set R14
						Get R0
						Get R13
						I64LtU
						BrIf $0
					End
				End
			Else
				Get R12
				Get R13
				Get R0
				I64Sub
				I64GeU
				If // no overlap
					Get R0
					I32WrapI64
					Get R14
					I32WrapI64
					Get R13
					Get R0
					I64Sub
					I32WrapI64
					MemoryCopy
				Else // one byte at a time
					Loop
						Get R0
						I32WrapI64
						Get R14
						I32WrapI64
						I32Load8U $0
						I32Store8 $0
						Get R14
						I64Const $1
						I64Add
						Set R14
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
		End

		Get R11
		I64Const $1
		I64Sub
		Tee R11
		I64Eqz
		I32Eqz
		BrIf $0
	End

	// The bitstream must be used up exactly: everything down to its start
	// read, and no more than the zero bytes loaded past it.
	MOVD src_base+72(FP), R15
	Get R15
	Get R3
	I64Sub
	Tee R15
	I64Const $0
	I64LtS
	BrIf $0
	Get R15
	I64Const $3
	I64Shl
	Get R2
	I64Ne
	BrIf $0

	// The literals left.
	I64Load LITEND
	Get R10
	I64Sub
	Tee R14
	I64Load LIMIT
	Get R0
	I64Sub
	I64GtU
	BrIf $0
	Get R0
	I32WrapI64
	Get R10
	I32WrapI64
	Get R14
	I32WrapI64
	MemoryCopy
	Get R0
	Get R14
	I64Add
	Set R0

	MOVD reps+128(FP), R15
	Get R15
	I32WrapI64
	Get R7
	I64Store $0
	Get R15
	I32WrapI64
	Get R8
	I64Store $8
	Get R15
	I32WrapI64
	Get R9
	I64Store $16
	Get SP
	Get R0
	I64Load out_base+0(FP)
	I64Sub
	I64Store ret+136(FP)
	End
	RET

// The Huffman stream kernel:
//
//	R0  where the next literal goes
//	R1, R2, R3  bv, bn, bp as above
//	R4  the end of the literals
//	R5  the table
//	R6  the longest code's length
//	R7  the mask of R6 bits
//	R8  the stream's first byte
//	R9  a table entry: the symbol << 8 | its code length
//	R10 where the last five-at-once step may start (R4-4)
//	R15 scratch

#undef STREAMSTART
#define STREAMSTART Get R8

// SYMBOL(O) decodes one literal into R0+O: the table entry of the next R6
// bits gives it and how many of them its code uses.
#define SYMBOL(O) \
	Get R0; I32WrapI64; \
	Get R1; Get R2; Get R6; I64Sub; I64ShrU; Get R7; I64And; I64Const $1; I64Shl; Get R5; I64Add; \
	I32WrapI64; I64Load16U $0; Tee R9; \
	I64Const $8; I64ShrU; I64Store8 $O; \
	Get R2; Get R9; I64Const $255; I64And; I64Sub; Set R2

// func huffStreamKernel(out, src []byte, table *[1 << maxHuffBits]uint16, mb uint) bool
TEXT ·huffStreamKernel(SB), NOSPLIT, $0-65
	Get SP
	I32Const $0
	I32Store8 ret+64(FP)
	MOVD out_base+0(FP), R0
	MOVD out_len+8(FP), R4
	MOVD src_base+24(FP), R8
	MOVD src_len+32(FP), R3
	MOVD table+48(FP), R5
	MOVD mb+56(FP), R6
	Get R0
	Get R4
	I64Add
	Tee R4
	I64Const $4
	I64Sub
	Set R10
	I64Const $1
	Get R6
	I64Shl
	I64Const $1
	I64Sub
	Set R7

	Block
	Get R3
	I64Eqz
	BrIf $0
	Get R8
	Get R3
	I64Add
	I64Const $1
	I64Sub
	Tee R3
	I32WrapI64
	I64Load8U $0
	Tee R1
	I64Eqz
	BrIf $0
	I64Const $63
	Get R1
	I64Clz
	I64Sub
	Set R2

	// Five literals per fill: codes are at most 11 bits long.
	Block
	Loop
		Get R0
		Get R10
		I64GeS
		BrIf $1
		Get R2
		I64Const $56
		I64LtU
		If
			FILL
		End
		SYMBOL(0)
		SYMBOL(1)
		SYMBOL(2)
		SYMBOL(3)
		SYMBOL(4)
		Get R0
		I64Const $5
		I64Add
		Set R0
		Br $0
	End
	End
	Block
	Loop
		Get R0
		Get R4
		I64GeU
		BrIf $1
		Get R2
		I64Const $56
		I64LtU
		If
			FILL
		End
		SYMBOL(0)
		Get R0
		I64Const $1
		I64Add
		Set R0
		Br $0
	End
	End

	// Used up exactly, as in sequencesKernel.
	Get R8
	Get R3
	I64Sub
	Tee R15
	I64Const $0
	I64LtS
	BrIf $0
	Get R15
	I64Const $3
	I64Shl
	Get R2
	I64Ne
	BrIf $0
	Get SP
	I32Const $1
	I32Store8 ret+64(FP)
	End
	RET
