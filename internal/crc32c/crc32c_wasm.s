//go:build wasm && !kwire_purego

#include "textflag.h"

// updateKernel is updateGeneric's algorithm: slicing-by-16, then one
// slicing-by-8 and one slicing-by-4 step and up to three single bytes.
//
// Locals: R0 the CRC register (in the low 32 bits; the high ones are zero),
// R1 the address of the next byte, R2 the length, R3 the address of the
// tables, R4 the end of the 16-byte rounds.
//
// What the code is shaped for: V8's optimizing tier on x86-64, where it runs
// at 1.5 to 2 times hash/crc32's speed. A table lookup of a data byte is a
// byte load, an address computation, a table load and an xor, the least
// there is, so data bytes are loaded one by one rather than as 64-bit words
// taken apart with shifts: fewer memory accesses but more instructions,
// slower in V8 (though faster in wazero, which checks the bounds of every
// access). The lookups of the twelve data bytes of a round do not depend on
// the register and are xored together first, one after the other; the
// register's four lookups, the only ones on the chain from round to round,
// are xored in pairs and then into the rest (xoring them in first is much
// slower). Unrolling two rounds an iteration, slicing by 32, lookups of
// 16-bit words (1.5 MiB of tables) and other xor orders measured no faster:
// with the register taken out of the rounds the loop runs no faster, so it
// is bound by the instructions a byte takes, not by the chain.

// LOOKUP(k) replaces the byte value v (i32) on top of the stack with t[k][v].
#define LOOKUP(k) I32Const $2; I32Shl; Get R3; I32WrapI64; I32Add; I32Load $((k)*1024)

// DATA(j, k) pushes t[k][p[j]].
#define DATA(j, k) Get R1; I32WrapI64; I32Load8U $(j); LOOKUP(k)

// CRC0(k) .. CRC3(k) push t[k][byte 0..3 of the register].
#define CRC0(k) Get R0; I32WrapI64; I32Const $0xff; I32And; LOOKUP(k)
#define CRC1(k) Get R0; I32WrapI64; I32Const $8; I32ShrU; I32Const $0xff; I32And; LOOKUP(k)
#define CRC2(k) Get R0; I32WrapI64; I32Const $16; I32ShrU; I32Const $0xff; I32And; LOOKUP(k)
#define CRC3(k) Get R0; I32WrapI64; I32Const $24; I32ShrU; LOOKUP(k)

// XOR4 xors the little-endian word at p into the register.
#define XOR4 Get R1; I32WrapI64; I64Load32U $0; Get R0; I64Xor; Set R0

// SETCRC pops an i32 into the register.
#define SETCRC I64ExtendI32U; Set R0

// ADVANCE(n) moves p on by n bytes.
#define ADVANCE(n) Get R1; I64Const $(n); I64Add; Set R1

// BYTE(j) feeds p[j] into the register: t[0][(crc^p[j])&0xff] ^ crc>>8.
#define BYTE(j) Get R0; I32WrapI64; Get R1; I32WrapI64; I32Load8U $(j); I32Xor; I32Const $0xff; I32And; LOOKUP(0); \
	Get R0; I32WrapI64; I32Const $8; I32ShrU; I32Xor; SETCRC

// func updateKernel(crc uint32, b []byte, t *slicing16) uint32
TEXT ·updateKernel(SB), NOSPLIT, $0-44
	I64Load32U crc+0(FP)
	Set R0
	I64Load b_base+8(FP)
	Set R1
	I64Load b_len+16(FP)
	Set R2
	I64Load t+32(FP)
	Set R3

	// R4 = p + len&^15.
	Get R1
	Get R2
	I64Const $-16
	I64And
	I64Add
	Set R4

	Get R1
	Get R4
	I64LtU
	If
loop:
		Loop
			// One round: p[0:16] into the register.
			XOR4
			DATA(4, 11); DATA(5, 10); I32Xor; DATA(6, 9); I32Xor; DATA(7, 8); I32Xor
			DATA(8, 7); I32Xor; DATA(9, 6); I32Xor; DATA(10, 5); I32Xor; DATA(11, 4); I32Xor
			DATA(12, 3); I32Xor; DATA(13, 2); I32Xor; DATA(14, 1); I32Xor; DATA(15, 0); I32Xor
			CRC0(15); CRC1(14); I32Xor; CRC2(13); CRC3(12); I32Xor; I32Xor
			I32Xor
			SETCRC
			ADVANCE(16)

			Get R1
			Get R4
			I64LtU
			BrIf loop
		End
	End

	// Fewer than 16 bytes are left; the length's low bits say which of the
	// steps below run.
	Get R2
	I32WrapI64
	I32Const $8
	I32And
	If
		XOR4
		DATA(4, 3); DATA(5, 2); I32Xor; DATA(6, 1); I32Xor; DATA(7, 0); I32Xor
		CRC0(7); CRC1(6); I32Xor; CRC2(5); CRC3(4); I32Xor; I32Xor
		I32Xor
		SETCRC
		ADVANCE(8)
	End

	Get R2
	I32WrapI64
	I32Const $4
	I32And
	If
		XOR4
		CRC0(3); CRC1(2); I32Xor; CRC2(1); CRC3(0); I32Xor; I32Xor
		SETCRC
		ADVANCE(4)
	End

	Get R2
	I32WrapI64
	I32Const $2
	I32And
	If
		BYTE(0)
		BYTE(1)
		ADVANCE(2)
	End

	Get R2
	I32WrapI64
	I32Const $1
	I32And
	If
		BYTE(0)
	End

	Get SP
	Get R0
	I64Store32 ret+40(FP)
	RET
