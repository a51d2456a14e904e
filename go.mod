module github.com/kwire/kwire

go 1.26

require (
	github.com/klauspost/compress v1.20.4
	github.com/pierrec/lz4/v4 v4.1.33
)
