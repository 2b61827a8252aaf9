package main

import (
	"bytes"
	"context"
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
	"runtime/debug"
	"slices"
	"strings"
)

// scenarioNames is the matrix's scenario list, in report order.
var scenarioNames = []string{
	"bucket", "object", "range", "list-v2-delimiter", "multipart",
	"copy", "tagging", "presigned", "checksum-default", "checksum-off",
}

// selectScenarios checks the requested names against known and returns them in
// known's order (all of known when none are requested).
func selectScenarios(wanted, known []string) ([]string, error) {
	for _, name := range wanted {
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("unknown scenario %s; known: %v", name, known)
		}
	}
	if len(wanted) == 0 {
		return known, nil
	}
	return slices.DeleteFunc(slices.Clone(known), func(name string) bool { return !slices.Contains(wanted, name) }), nil
}

// startUp returns the scenarios asked for and the endpoint, or exits 2 on bad usage.
func startUp(args, known []string) ([]string, endpoint) {
	wanted, err := selectScenarios(args, known)
	if err == nil {
		var e endpoint
		if e, err = endpointFromEnv(); err == nil {
			return wanted, e
		}
	}
	logf("%v", err)
	os.Exit(2)
	return nil, endpoint{}
}

// moduleVersion reads a dependency's version from the build info go.sum pinned.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == path {
			return dep.Version
		}
	}
	return "unknown"
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
	return checksumBase64(crc32.ChecksumIEEE(data))
}

func crc32cBase64(data []byte) string {
	return checksumBase64(crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
}

// checksumBase64 is a CRC as the x-amz-checksum-* headers carry it: big-endian, base64.
func checksumBase64(crc uint32) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc)
	return base64.StdEncoding.EncodeToString(sum[:])
}

func checkSameBytes(got, expected []byte, what string) error {
	if !bytes.Equal(got, expected) {
		return failure("%s: got %d bytes, expected %d bytes with other content", what, len(got), len(expected))
	}
	return nil
}

// reporter prints one JSON line per scenario result for one SDK.
type reporter struct {
	sdk, version string
}

func (r reporter) emit(scenario string, ok bool, detail string) {
	if runes := []rune(detail); len(runes) > 600 {
		detail = string(runes[:600]) + "..."
	}
	line, _ := json.Marshal(map[string]any{
		"sdk": r.sdk, "version": r.version, "scenario": scenario, "ok": ok, "detail": detail,
	})
	fmt.Println(string(line))
}

// runScenarios runs the wanted scenarios in report order, each after setup
// (the working bucket) has succeeded, except "bucket", which makes its own.
func runScenarios(ctx context.Context, report reporter, wanted []string,
	bodies map[string]func(context.Context) (string, error), bucket string, setup func() error) {
	var setupErr error
	if slices.ContainsFunc(wanted, func(name string) bool { return name != "bucket" }) {
		setupErr = setup()
	}
	for _, name := range wanted {
		if setupErr != nil && name != "bucket" {
			report.emit(name, false, "setup failed: CreateBucket "+bucket+": "+setupErr.Error())
			continue
		}
		note, err := bodies[name](ctx)
		if err != nil {
			report.emit(name, false, err.Error())
		} else {
			report.emit(name, true, note)
		}
	}
}
