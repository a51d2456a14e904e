//go:build wasm && !kwire_purego

// The record scan for Go's WebAssembly target: Scan' loop (scan.go) for records
// whose varints take one or two bytes, which is nearly every record Kafka clients
// write. Anything else (a longer varint, a bound crossed, bad bytes) stops it before
// that record, and scanRecords (scan_kernel_wasm.go) hands that one record to
// scanRecordsGeneric, which reads it or says why it cannot.

#include "textflag.h"

// Registers (i64 locals):
//   R0 data base   R1 len(data)   R2 pos (start of the next record)
//   R3 spans slot  R4 record slots left   R5 header slot   R6 header slots left
//   R7 records     R8 headers     R9 the record's end   R10 p   R11 value
//   R12, R13 varint scratch   R14 headers left in the record   R15 header slot being written

// VARINT2 reads the zigzag varint at R10 into R11 and moves R10 past it, or branches to
// BAIL when it is not 1 or 2 bytes long before LIMIT. Branch-free but for the bail.
#define VARINT2(LIMIT, BAIL) \
	Get R10; Get LIMIT; I64GeU; BrIf $BAIL; \
	Get R0; Get R10; I64Add; I32WrapI64; I64Load8U $0; Set R11; \
	Get R11; I64Const $7; I64ShrU; Set R12; \
	Get R10; Get R12; I64Add; Get LIMIT; I64GeU; BrIf $BAIL; \
	Get R0; Get R10; I64Add; Get R12; I64Add; I32WrapI64; I64Load8U $0; Set R13; \
	Get R13; I64Const $0x80; I64GeU; BrIf $BAIL; \
	Get R11; I64Const $0x7f; I64And; \
	Get R13; I64Const $7; I64Shl; I64Const $0; Get R12; I64Sub; I64And; \
	I64Or; Set R11; \
	Get R10; I64Const $1; I64Add; Get R12; I64Add; Set R10; \
	Get R11; I64Const $1; I64ShrU; I64Const $0; Get R11; I64Const $1; I64And; I64Sub; I64Xor; Set R11

// SPAN takes the length in R11 of a nullable field at R10 (a negative length is null)
// and writes its (offset, length) at SLOT+OFF and SLOT+LEN: (0, -1) when null, else
// (R10, R11) after checking that it fits before the record's end; R10 moves past it.
#define SPAN(SLOT, OFF, LEN, BAIL) \
	Get R11; I64Const $0; I64GeS; Get R11; Get R9; Get R10; I64Sub; I64GtS; I32And; BrIf $BAIL; \
	Get SLOT; I32WrapI64; Get R10; I64Const $0; Get R11; I64Const $0; I64GeS; Select; I64Store32 $OFF; \
	Get SLOT; I32WrapI64; Get R11; I64Const $-1; Get R11; I64Const $0; I64GeS; Select; I64Store32 $LEN; \
	Get R10; Get R11; I64Const $0; Get R11; I64Const $0; I64GeS; Select; I64Add; Set R10

// func scanRecordsKernel(data []byte, pos int, spans, hdrs []int32) (next, nrec, nhdr int, done bool)
TEXT ·scanRecordsKernel(SB), NOSPLIT, $0-105
	I64Load data_base+0(FP)
	Set R0
	I64Load data_len+8(FP)
	Set R1
	I64Load pos+24(FP)
	Set R2
	I64Load spans_base+32(FP)
	Set R3
	I64Load spans_len+40(FP)
	I64Const $3
	I64ShrU
	Set R4
	I64Load hdrs_base+56(FP)
	Set R5
	I64Load hdrs_len+64(FP)
	I64Const $2
	I64ShrU
	Set R6
	I64Const $0
	Set R7
	I64Const $0
	Set R8

	Block // the results, with R13 = done
	Block // bail: the record at R2 is the twin's
	Block // done: out of room or of data
	Loop
		// depths: 0 this loop, 1 done, 2 bail
		Get R4
		I64Eqz
		BrIf $1
		Get R2
		Get R1
		I64GeU
		BrIf $1
		Get R2
		Set R10

		// length, at least 6 (minRecordSize-1) and within data
		VARINT2(R1, 2)
		Get R11
		I64Const $6
		I64LtS
		BrIf $2
		Get R11
		Get R1
		Get R10
		I64Sub
		I64GtS
		BrIf $2
		Get R10
		Get R11
		I64Add
		Set R9

		// attributes
		Get R10
		I64Const $1
		I64Add
		Set R10

		// timestamp delta: an int64 at spans[1:3]
		VARINT2(R9, 2)
		Get R3
		I32WrapI64
		Get R11
		I64Store $4

		// offset delta
		VARINT2(R9, 2)
		Get R3
		I32WrapI64
		Get R11
		I64Store32 $0

		// key, value
		VARINT2(R9, 2)
		SPAN(R3, 12, 16, 2)
		VARINT2(R9, 2)
		SPAN(R3, 20, 24, 2)

		// header count: not negative, 2 bytes each at least, room for them (else done)
		VARINT2(R9, 2)
		Get R11
		I64Const $0
		I64LtS
		BrIf $2
		Get R11
		I64Const $1
		I64Shl
		Get R9
		Get R10
		I64Sub
		I64GtS
		BrIf $2
		Get R11
		Get R6
		I64GtU
		BrIf $1
		Get R3
		I32WrapI64
		Get R11
		I64Store32 $28
		Get R11
		Set R14
		Get R5
		Set R15

		Block
		Loop
			// depths: 0 this loop, 1 its block, 2 the record loop, 3 done, 4 bail
			Get R14
			I64Eqz
			BrIf $1
			// key: not null, within the record
			VARINT2(R9, 4)
			Get R11
			I64Const $0
			I64LtS
			BrIf $4
			Get R11
			Get R9
			Get R10
			I64Sub
			I64GtS
			BrIf $4
			Get R15
			I32WrapI64
			Get R10
			I64Store32 $0
			Get R15
			I32WrapI64
			Get R11
			I64Store32 $4
			Get R10
			Get R11
			I64Add
			Set R10
			// value: nullable
			VARINT2(R9, 4)
			SPAN(R15, 8, 12, 4)
			Get R15
			I64Const $16
			I64Add
			Set R15
			Get R14
			I64Const $1
			I64Sub
			Set R14
			Br $0
		End
		End

		// the fields fill the record exactly
		Get R10
		Get R9
		I64Ne
		BrIf $2

		// commit the record: its headers are (R15-R5)/16
		Get R15
		Get R5
		I64Sub
		I64Const $4
		I64ShrU
		Set R14
		Get R8
		Get R14
		I64Add
		Set R8
		Get R6
		Get R14
		I64Sub
		Set R6
		Get R15
		Set R5
		Get R3
		I64Const $32
		I64Add
		Set R3
		Get R4
		I64Const $1
		I64Sub
		Set R4
		Get R7
		I64Const $1
		I64Add
		Set R7
		Get R9
		Set R2
		Br $0
	End
	End
	// done
	I64Const $1
	Set R13
	Br $1
	End
	// bail
	I64Const $0
	Set R13
	End
	Get SP
	Get R2
	I64Store next+80(FP)
	Get SP
	Get R7
	I64Store nrec+88(FP)
	Get SP
	Get R8
	I64Store nhdr+96(FP)
	Get SP
	Get R13
	I32WrapI64
	I32Store8 done+104(FP)
	RET
