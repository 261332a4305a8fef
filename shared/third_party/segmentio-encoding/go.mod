module github.com/segmentio/encoding

go 1.23

require github.com/segmentio/asm v1.1.3
