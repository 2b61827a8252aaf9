package main

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
)

// scenarioNames is the matrix's scenario list, in report order.
var scenarioNames = []string{
	"bucket", "object", "range", "list-v2-delimiter", "multipart",
	"copy", "tagging", "presigned", "checksum-default", "checksum-off",
}

const (
	partSize = 5 * 1024 * 1024
	// Larger than one aws-chunked chunk, so streaming uploads span several chunks and a trailer.
	checksumBodySize = 256*1024 + 123
)

var treeKeys = []string{
	"tree/a.txt", "tree/b.txt", "tree/c.txt",
	"tree/dir1/x.txt", "tree/dir1/y.txt", "tree/dir2/z.txt", "tree/dir3/w.txt",
}

// listPage is one ListObjectsV2 page: its keys and common prefixes.
type listPage struct {
	Keys     []string
	Prefixes []string
}

// expectedTreePages is ListObjectsV2 with prefix tree/, delimiter / and max-keys 2.
var expectedTreePages = []listPage{
	{Keys: []string{"tree/a.txt", "tree/b.txt"}, Prefixes: []string{}},
	{Keys: []string{"tree/c.txt"}, Prefixes: []string{"tree/dir1/"}},
	{Keys: []string{}, Prefixes: []string{"tree/dir2/", "tree/dir3/"}},
}

var tags = map[string]string{"project": "s3gw", "tier": "gold"}

// endpoint is the S3 endpoint under test, from the environment.
type endpoint struct {
	URL, AccessKey, SecretKey, Region string
}

func endpointFromEnv() (endpoint, error) {
	var missing []string
	get := func(name string) string {
		value := os.Getenv(name)
		if value == "" {
			missing = append(missing, name)
		}
		return value
	}
	e := endpoint{
		URL:       strings.TrimRight(get("S3_ENDPOINT"), "/"),
		AccessKey: get("S3_ACCESS_KEY"),
		SecretKey: get("S3_SECRET_KEY"),
		Region:    os.Getenv("S3_REGION"),
	}
	if e.Region == "" {
		e.Region = "us-east-1"
	}
	if len(missing) > 0 {
		return e, fmt.Errorf("missing environment: %s", strings.Join(missing, ", "))
	}
	return e, nil
}

// failure is a scenario check that did not hold.
func failure(format string, args ...any) error {
	return errors.New(fmt.Sprintf(format, args...))
}

func randomBytes(n int) []byte {
	data := make([]byte, n)
	// Since Go 1.24 crypto/rand.Read never fails.
	_, _ = rand.Read(data)
	return data
}

func randomSuffix() string {
	return hex.EncodeToString(randomBytes(4))
}

func quotedMD5(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// multipartETag is the S3 multipart ETag: md5 of the concatenated binary part md5s, then -N.
// With S3_MULTIPART_ETAG=ozone, Ozone's: md5 of the parts' hex md5s as text.
func multipartETag(parts [][]byte) string {
	ozone := os.Getenv("S3_MULTIPART_ETAG") == "ozone"
	joined := md5.New()
	for _, part := range parts {
		sum := md5.Sum(part)
		if ozone {
			joined.Write([]byte(hex.EncodeToString(sum[:])))
		} else {
			joined.Write(sum[:])
		}
	}
	return fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(joined.Sum(nil)), len(parts))
}

func crc32Base64(data []byte) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(data))
	return base64.StdEncoding.EncodeToString(sum[:])
}

func checkSameBytes(got, expected []byte, what string) error {
	if !bytes.Equal(got, expected) {
		return failure("%s: got %d bytes, expected %d bytes with other content", what, len(got), len(expected))
	}
	return nil
}

// reporter prints one JSON line per scenario result.
type reporter struct {
	version string
}

func (r reporter) emit(scenario string, ok bool, detail string) {
	if runes := []rune(detail); len(runes) > 600 {
		detail = string(runes[:600]) + "..."
	}
	line, _ := json.Marshal(map[string]any{
		"sdk": "go-v2", "version": r.version, "scenario": scenario, "ok": ok, "detail": detail,
	})
	fmt.Println(string(line))
}
