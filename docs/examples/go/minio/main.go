// minio-go (the library warp is built on) against s3-gateway: upload,
// download, list, presign, multipart.
//
//	AWS_ENDPOINT_URL=http://127.0.0.1:9878 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... go run ./minio
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func must[T any](value T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return value
}

func main() {
	ctx := context.Background()
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if endpoint == "" {
		endpoint = "http://127.0.0.1:9878"
	}
	parsed := must(url.Parse(endpoint))
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	client := must(minio.New(parsed.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
		Secure:       parsed.Scheme == "https",
		Region:       region,
		BucketLookup: minio.BucketLookupPath, // http://host/bucket/key works without wildcard DNS
	}))
	bucket := fmt.Sprintf("example-minio-%08x", rand.Uint32())
	if err := client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: region}); err != nil {
		log.Fatal(err)
	}

	// Upload and download.
	hello := "hello, s3-gateway"
	must(client.PutObject(ctx, bucket, "hello.txt", strings.NewReader(hello), int64(len(hello)), minio.PutObjectOptions{}))
	object := must(client.GetObject(ctx, bucket, "hello.txt", minio.GetObjectOptions{}))
	if body := must(io.ReadAll(object)); string(body) != hello {
		log.Fatalf("read back %q", body)
	}

	// List.
	var keys []string
	for info := range client.ListObjects(ctx, bucket, minio.ListObjectsOptions{}) {
		if info.Err != nil {
			log.Fatal(info.Err)
		}
		keys = append(keys, info.Key)
	}
	if len(keys) != 1 || keys[0] != "hello.txt" {
		log.Fatalf("listed %v", keys)
	}

	// A presigned URL: anyone holding it may GET the object for an hour.
	signed := must(client.PresignedGetObject(ctx, bucket, "hello.txt", time.Hour, url.Values{}))
	answer := must(http.Get(signed.String()))
	if body := must(io.ReadAll(answer.Body)); string(body) != hello {
		log.Fatalf("presigned GET answered %d %q", answer.StatusCode, body)
	}

	// Multipart: minio-go splits an upload larger than PartSize into parts.
	size := int64(5*1024*1024 + 1024)
	big := bytes.Repeat([]byte("a"), int(size))
	must(client.PutObject(ctx, bucket, "big.bin", bytes.NewReader(big), size, minio.PutObjectOptions{PartSize: 5 * 1024 * 1024}))
	if stat := must(client.StatObject(ctx, bucket, "big.bin", minio.StatObjectOptions{})); stat.Size != size {
		log.Fatalf("size %d", stat.Size)
	}

	// Clean up.
	for _, key := range []string{"hello.txt", "big.bin"} {
		if err := client.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
			log.Fatal(err)
		}
	}
	if err := client.RemoveBucket(ctx, bucket); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ok")
}
