module github.com/vulnd/vulnd

go 1.26.8

require (
	github.com/goccy/go-json v0.12.0
	github.com/google/go-cmp v0.7.0
	github.com/julienschmidt/httprouter v1.3.0
	github.com/klauspost/compress v1.20.3
)
