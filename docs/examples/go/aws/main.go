// Go SDK v2 against s3-gateway: upload, download, list, presign, multipart.
//
//	AWS_ENDPOINT_URL=http://127.0.0.1:9878 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... go run ./aws
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

func must[T any](value T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return value
}

func main() {
	ctx := context.Background()
	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(env("AWS_ENDPOINT_URL", "http://127.0.0.1:9878")),
		Region:       env("AWS_REGION", "us-east-1"),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY")}, nil
		}),
		UsePathStyle: true, // http://host/bucket/key works without wildcard DNS
	})
	bucket := aws.String(fmt.Sprintf("example-go-%08x", rand.Uint32()))
	must(client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket}))

	// Upload and download.
	hello := aws.String("hello.txt")
	must(client.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: hello, Body: strings.NewReader("hello, s3-gateway")}))
	got := must(client.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: hello}))
	if body := must(io.ReadAll(got.Body)); string(body) != "hello, s3-gateway" {
		log.Fatalf("read back %q", body)
	}

	// List.
	listed := must(client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bucket}))
	if len(listed.Contents) != 1 || *listed.Contents[0].Key != "hello.txt" {
		log.Fatalf("listed %v", listed.Contents)
	}

	// A presigned URL: anyone holding it may GET the object for an hour.
	presigner := s3.NewPresignClient(client, s3.WithPresignExpires(time.Hour))
	signed := must(presigner.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: hello}))
	answer := must(http.Get(signed.URL))
	if body := must(io.ReadAll(answer.Body)); string(body) != "hello, s3-gateway" {
		log.Fatalf("presigned GET answered %d %q", answer.StatusCode, body)
	}

	// Multipart: parts of at least 5 MiB, but the last.
	big := aws.String("big.bin")
	parts := [][]byte{bytes.Repeat([]byte("a"), 5*1024*1024), bytes.Repeat([]byte("b"), 1024)}
	upload := must(client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: big}))
	var done []types.CompletedPart
	for index, body := range parts {
		number := aws.Int32(int32(index + 1))
		part := must(client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: bucket, Key: big, UploadId: upload.UploadId, PartNumber: number, Body: bytes.NewReader(body),
		}))
		done = append(done, types.CompletedPart{PartNumber: number, ETag: part.ETag})
	}
	must(client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: bucket, Key: big, UploadId: upload.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	}))
	head := must(client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: bucket, Key: big}))
	if *head.ContentLength != 5*1024*1024+1024 {
		log.Fatalf("size %d", *head.ContentLength)
	}

	// Clean up.
	for _, key := range []*string{hello, big} {
		must(client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: key}))
	}
	must(client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: bucket}))
	fmt.Println("ok")
}
