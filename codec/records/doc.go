// Package records reads and writes the payload of Produce and Fetch: Kafka's
// record batches (magic 2) and legacy message sets (magic 0 and 1), compressed
// with gzip, snappy, lz4 or zstd or not at all, and presents their records as
// Messages, the view an application or a filter wants.
//
// # Batches
//
// ParseBatch reads a magic 2 batch header and checks its length, CRC32C and
// record count; a Decoder then walks its records lazily (Records) or
// materialises them (AppendRecords). Keys, values and header data of an
// uncompressed batch alias the input: walking one allocates nothing per record.
// A compressed batch is decompressed into the Decoder's one reusable buffer,
// which its records alias until the decoder decompresses the next batch.
// Encoder.AppendBatch writes a batch, computing its length and CRC.
//
// Legacy messages (ParseLegacyMessage, Decoder.ForEachInner,
// Encoder.AppendLegacySet) follow Kafka's rules: CRC32 (IEEE) over magic to
// end; a compressed wrapper holds inner messages whose offsets are relative for
// magic 1 (the wrapper carries the last absolute offset) and absolute for magic
// 0; a LogAppendTime wrapper's timestamp replaces the inner ones.
//
// Decoder.ForEachMessage walks a whole records field, any mix of magics, the
// way Kafka's consumer does: a partial batch at the end (a fetch response may
// cut one) is skipped and reported, not an error.
//
// # Compression
//
// kwire's own decoders define what decodes: gzip is the standard library's
// reader (concatenated members read as one stream, as Kafka's Java reader
// does); snappy and LZ4 blocks are decoded by kwire's own block decoders inside
// its own xerial and LZ4 frame readers; zstd by kwire's own decoder
// (internal/zstd). WebAssembly builds (and kwire_nocompress ones) use
// only these. Native builds try github.com/klauspost/compress (gzip, zstd) and
// github.com/pierrec/lz4 (LZ4 blocks) first, which run assembly on amd64 and
// arm64, and decode again with kwire's own decoder whatever those refuse, so
// the error an input gets is the same in every build. (The one known
// difference: pierrec accepts an LZ4 block that ends in a match, which the LZ4
// format and kwire's decoder do not; no encoder writes one.) Native builds
// encode with github.com/klauspost/compress for gzip and zstd and
// github.com/pierrec/lz4/v4's block compressor inside kwire's LZ4 frame
// writer. WebAssembly builds (and native ones with the tag kwire_ownenc)
// encode with kwire's own encoders, one level each, which link none of those
// libraries: internal/deflate (gzip), internal/lz4enc (LZ4
// blocks) and internal/zstd's encoder. Every build has kwire's own
// snappy block encoder.
//
// Snappy is read both raw and in the xerial framing Java clients write (whose
// version fields some brokers write little-endian; they are not checked), and
// written in xerial framing (Encoder.RawSnappy for raw). LZ4 frames of magic 0
// carry Kafka's old header checksum, computed over the frame magic too; it is
// written that way and, as Kafka does, not checked on read. Codecs run on the
// caller's goroutine and start none, so the package works under GOOS=wasip1
// and GOOS=js; codec state is pooled.
//
// Built with the tag kwire_nocompress, the package has no compressors and
// links no compression library: it decodes every codec as above, but Compress
// and every encoder asked for gzip, snappy, lz4 or zstd fail with
// ErrUnsupported. Binaries that only read (a filter) use it to stay small.
//
// Decompressed size is capped by Options.MaxDecompressedSize (default
// DefaultMaxDecompressedSize, the 100 MiB frame limit). Past it decoding fails
// with ErrTooLarge, having held at most about the cap: a frame that declares a
// larger content size (zstd, lz4) or a snappy block that claims one is refused
// before anything is allocated; otherwise the output grows by doubling up to
// the cap. zstd frames decode straight into the output, which is their match
// history: they need no window buffer, whatever window size they state.
//
// # Errors
//
// Every failure is an *Error naming the batch (its base offset), the record
// index, the field and the byte offset, wrapping one of ErrTruncated,
// ErrCorrupt, ErrCRC, ErrTooLarge or ErrUnsupported. Nothing in the package
// panics on bad input.
//
// # Messages and schema references
//
// A Message carries topic, partition, offset, timestamp and its type, key,
// value, headers, producer id, epoch and sequence, the transactional and
// control flags (with the control record typed: ABORT and COMMIT markers with
// their coordinator epoch), and a schema reference, resolved by ResolveSchema:
//
//   - Record headers, first: a header "schema.id" whose value is the schema id
//     as decimal ASCII (for example "42"), and optionally "schema.version", the
//     version as decimal ASCII. The last header of each name wins. Source is
//     SchemaHeader.
//   - Otherwise the Confluent wire format: a value of at least 5 bytes starting
//     with the magic byte 0, then the schema id as a 4-byte big-endian integer.
//     Source is SchemaValuePrefix and Message.Payload returns the value after
//     the prefix; the version comes from a "schema.version" header if present.
//
// A value that merely starts with a zero byte is read as carrying a schema id;
// applications that mix schema-less binary values with Confluent-framed ones
// should use the headers.
//
// Decoder.ForEachFetchMessage walks every message of a codec.FetchResponse and
// marks the data of aborted transactions as Kafka's read_committed consumer
// would; Encoder.AppendProduceMessages builds the records of a
// codec.ProduceRequest from messages per topic-partition with a chosen
// compression, in the message format the request version needs.
package records
