package s3gw.sdkmatrix;

import static s3gw.sdkmatrix.Support.check;
import static s3gw.sdkmatrix.Support.checkSameBytes;
import static s3gw.sdkmatrix.Support.concat;
import static s3gw.sdkmatrix.Support.crc32Base64;
import static s3gw.sdkmatrix.Support.multipartEtag;
import static s3gw.sdkmatrix.Support.quotedMd5;
import static s3gw.sdkmatrix.Support.randomBytes;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.Tag;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/** The matrix scenarios against one working bucket (see ../README.md). */
final class Scenarios {
    static final int PART_SIZE = 5 * 1024 * 1024;
    /** Larger than one aws-chunked chunk, so streaming uploads span several chunks and a trailer. */
    static final int CHECKSUM_BODY_SIZE = 256 * 1024 + 123;
    static final List<String> TREE_KEYS = List.of(
            "tree/a.txt", "tree/b.txt", "tree/c.txt",
            "tree/dir1/x.txt", "tree/dir1/y.txt", "tree/dir2/z.txt", "tree/dir3/w.txt");
    /** ListObjectsV2 with prefix tree/, delimiter / and max-keys 2: [keys, common prefixes] per page. */
    static final List<List<List<String>>> EXPECTED_TREE_PAGES = List.of(
            List.of(List.of("tree/a.txt", "tree/b.txt"), List.of()),
            List.of(List.of("tree/c.txt"), List.of("tree/dir1/")),
            List.of(List.of(), List.of("tree/dir2/", "tree/dir3/")));
    static final Map<String, String> TAGS = Map.of("project", "s3gw", "tier", "gold");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final Endpoint endpoint;
    final S3Client s3;
    final String prefix;

    Scenarios(Endpoint endpoint, S3Client s3, String prefix) {
        this.endpoint = endpoint;
        this.s3 = s3;
        this.prefix = prefix;
    }

    String bucket() {
        return prefix;
    }

    String spareBucket() {
        return prefix + "-b";
    }

    static S3Client makeClient(Endpoint endpoint, boolean checksumsByDefault) {
        var builder = S3Client.builder()
                .region(Region.of(endpoint.region()))
                .endpointOverride(URI.create(endpoint.url()))
                .forcePathStyle(true)
                .credentialsProvider(credentials(endpoint));
        if (!checksumsByDefault) {
            builder.requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        }
        return builder.build();
    }

    private static StaticCredentialsProvider credentials(Endpoint endpoint) {
        return StaticCredentialsProvider.create(AwsBasicCredentials.create(endpoint.accessKey(), endpoint.secretKey()));
    }

    private static void expectNotFound(Runnable call, String what) {
        try {
            call.run();
        } catch (S3Exception e) {
            check(e.statusCode() == 404, what + ": expected 404, got " + e.statusCode() + ": " + e.getMessage());
            return;
        }
        throw new Support.Failure(what + ": still exists");
    }

    /** us-east-1 is the one region where CreateBucket takes no LocationConstraint. */
    void createBucket(String name) {
        String region = endpoint.region();
        s3.createBucket(b -> {
            b.bucket(name);
            if (!region.equals("us-east-1")) {
                b.createBucketConfiguration(c -> c.locationConstraint(region));
            }
        });
    }

    void bucketScenario() {
        String name = spareBucket();
        createBucket(name);
        try {
            s3.headBucket(b -> b.bucket(name));
            List<String> names = s3.listBuckets().buckets().stream().map(b -> b.name()).toList();
            check(names.contains(name), "ListBuckets does not list " + name + ": " + names);
        } finally {
            s3.deleteBucket(b -> b.bucket(name));
        }
        expectNotFound(() -> s3.headBucket(b -> b.bucket(name)), "HeadBucket after DeleteBucket");
    }

    void objectScenario() {
        String key = "object/hello world.txt";
        byte[] body = randomBytes(64 * 1024 + 7);
        Map<String, String> blue = Map.of("color", "blue");
        PutObjectResponse put = s3.putObject(
                r -> r.bucket(bucket()).key(key).contentType("text/plain").metadata(blue), RequestBody.fromBytes(body));
        check(quotedMd5(body).equals(put.eTag()), "PutObject ETag " + put.eTag() + ", expected " + quotedMd5(body));
        ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(r -> r.bucket(bucket()).key(key));
        checkSameBytes(got.asByteArray(), body, "GetObject body");
        check("text/plain".equals(got.response().contentType()), "GetObject Content-Type " + got.response().contentType());
        check(blue.equals(got.response().metadata()), "GetObject metadata " + got.response().metadata());
        check(put.eTag().equals(got.response().eTag()), "GetObject ETag " + got.response().eTag());
        HeadObjectResponse head = s3.headObject(r -> r.bucket(bucket()).key(key));
        check(Objects.equals(head.contentLength(), (long) body.length), "HeadObject Content-Length " + head.contentLength());
        check(put.eTag().equals(head.eTag()), "HeadObject ETag " + head.eTag());
        check(blue.equals(head.metadata()), "HeadObject metadata " + head.metadata());
        s3.deleteObject(r -> r.bucket(bucket()).key(key));
        expectNotFound(() -> s3.headObject(r -> r.bucket(bucket()).key(key)), "HeadObject after DeleteObject");
    }

    void rangeScenario() {
        String key = "range/data.bin";
        byte[] body = randomBytes(10_000);
        s3.putObject(r -> r.bucket(bucket()).key(key), RequestBody.fromBytes(body));
        record Case(String header, byte[] expected, String contentRange) {}
        List<Case> cases = List.of(
                new Case("bytes=100-199", Arrays.copyOfRange(body, 100, 200), "bytes 100-199/10000"),
                new Case("bytes=9950-", Arrays.copyOfRange(body, 9950, 10_000), "bytes 9950-9999/10000"),
                new Case("bytes=-50", Arrays.copyOfRange(body, 9950, 10_000), "bytes 9950-9999/10000"));
        for (Case c : cases) {
            ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(r -> r.bucket(bucket()).key(key).range(c.header()));
            checkSameBytes(got.asByteArray(), c.expected(), "Range " + c.header());
            check(c.contentRange().equals(got.response().contentRange()),
                    "Range " + c.header() + ": Content-Range " + got.response().contentRange());
        }
    }

    void listScenario() {
        for (String key : TREE_KEYS) {
            s3.putObject(r -> r.bucket(bucket()).key(key), RequestBody.fromString(key));
        }
        List<List<List<String>>> pages = new ArrayList<>();
        String token = null;
        while (pages.size() <= EXPECTED_TREE_PAGES.size()) {
            String continuation = token;
            ListObjectsV2Response page = s3.listObjectsV2(r -> r.bucket(bucket()).prefix("tree/").delimiter("/")
                    .maxKeys(2).continuationToken(continuation));
            List<String> keys = page.contents().stream().map(S3Object::key).toList();
            List<String> prefixes = page.commonPrefixes().stream().map(CommonPrefix::prefix).toList();
            pages.add(List.of(keys, prefixes));
            check(Objects.equals(page.keyCount(), keys.size() + prefixes.size()),
                    "page " + pages.size() + ": KeyCount " + page.keyCount());
            if (!Boolean.TRUE.equals(page.isTruncated())) {
                break;
            }
            token = page.nextContinuationToken();
            check(token != null && !token.isEmpty(),
                    "page " + pages.size() + " is truncated but has no NextContinuationToken");
        }
        check(pages.equals(EXPECTED_TREE_PAGES), "pages " + pages + ", expected " + EXPECTED_TREE_PAGES);
    }

    void multipartScenario() {
        String key = "multipart/big.bin";
        List<byte[]> parts = List.of(randomBytes(PART_SIZE), randomBytes(PART_SIZE), randomBytes(PART_SIZE));
        String uploadId = s3.createMultipartUpload(r -> r.bucket(bucket()).key(key)).uploadId();
        String etag;
        try {
            List<CompletedPart> completed = new ArrayList<>();
            for (int i = 0; i < parts.size(); i++) {
                int number = i + 1;
                String partEtag = s3.uploadPart(r -> r.bucket(bucket()).key(key).uploadId(uploadId).partNumber(number),
                        RequestBody.fromBytes(parts.get(i))).eTag();
                check(quotedMd5(parts.get(i)).equals(partEtag), "UploadPart " + number + " ETag " + partEtag);
                completed.add(CompletedPart.builder().partNumber(number).eTag(partEtag).build());
            }
            etag = s3.completeMultipartUpload(r -> r.bucket(bucket()).key(key).uploadId(uploadId)
                    .multipartUpload(m -> m.parts(completed))).eTag();
        } catch (RuntimeException e) {
            try {
                s3.abortMultipartUpload(r -> r.bucket(bucket()).key(key).uploadId(uploadId));
            } catch (RuntimeException abortError) {
                System.err.println("java-v2: abort of upload " + uploadId + " failed: " + abortError.getMessage());
            }
            throw e;
        }
        check(etag != null && etag.replace("\"", "").endsWith("-3"),
                "CompleteMultipartUpload ETag " + etag + " does not end in -3");
        check(multipartEtag(parts).equals(etag),
                "CompleteMultipartUpload ETag " + etag + ", expected " + multipartEtag(parts));
        ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(r -> r.bucket(bucket()).key(key));
        checkSameBytes(got.asByteArray(), concat(parts), "GetObject of the completed upload");
        check(etag.equals(got.response().eTag()), "GetObject ETag " + got.response().eTag() + ", expected " + etag);
    }

    void copyScenario() {
        String source = "copy/source.bin";
        String target = "copy/target.bin";
        byte[] body = randomBytes(32 * 1024);
        Map<String, String> origin = Map.of("origin", "copy-test");
        PutObjectResponse put = s3.putObject(r -> r.bucket(bucket()).key(source).metadata(origin), RequestBody.fromBytes(body));
        String copied = s3.copyObject(r -> r.sourceBucket(bucket()).sourceKey(source)
                .destinationBucket(bucket()).destinationKey(target)).copyObjectResult().eTag();
        check(put.eTag().equals(copied), "CopyObject ETag " + copied + ", source " + put.eTag());
        ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(r -> r.bucket(bucket()).key(target));
        checkSameBytes(got.asByteArray(), body, "GetObject of the copy");
        check(origin.equals(got.response().metadata()), "copy metadata " + got.response().metadata());
    }

    void taggingScenario() {
        String key = "tagging/object.txt";
        s3.putObject(r -> r.bucket(bucket()).key(key), RequestBody.fromString("tagged"));
        List<Tag> tagSet = TAGS.entrySet().stream()
                .map(e -> Tag.builder().key(e.getKey()).value(e.getValue()).build()).toList();
        s3.putObjectTagging(r -> r.bucket(bucket()).key(key).tagging(t -> t.tagSet(tagSet)));
        Map<String, String> seen = new HashMap<>();
        s3.getObjectTagging(r -> r.bucket(bucket()).key(key)).tagSet().forEach(t -> seen.put(t.key(), t.value()));
        check(TAGS.equals(seen), "GetObjectTagging " + seen + ", expected " + TAGS);
        s3.deleteObjectTagging(r -> r.bucket(bucket()).key(key));
        List<Tag> left = s3.getObjectTagging(r -> r.bucket(bucket()).key(key)).tagSet();
        check(left.isEmpty(), "GetObjectTagging after DeleteObjectTagging: " + left);
    }

    void presignedScenario() throws IOException, InterruptedException {
        String key = "presigned/file.bin";
        byte[] body = randomBytes(20 * 1024);
        Duration expiry = Duration.ofMinutes(10);
        try (S3Presigner presigner = S3Presigner.builder()
                .region(Region.of(endpoint.region()))
                .endpointOverride(URI.create(endpoint.url()))
                .credentialsProvider(credentials(endpoint))
                .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(true).build())
                .build()) {
            var put = presigner.presignPutObject(p -> p.signatureDuration(expiry)
                    .putObjectRequest(r -> r.bucket(bucket()).key(key)));
            HttpResponse<byte[]> stored = send(put.httpRequest(), put.signedHeaders(), body);
            check(stored.statusCode() == 200, "presigned PUT: HTTP " + stored.statusCode() + ": " + excerpt(stored.body()));
            var get = presigner.presignGetObject(p -> p.signatureDuration(expiry)
                    .getObjectRequest(r -> r.bucket(bucket()).key(key)));
            HttpResponse<byte[]> fetched = send(get.httpRequest(), get.signedHeaders(), null);
            check(fetched.statusCode() == 200, "presigned GET: HTTP " + fetched.statusCode() + ": " + excerpt(fetched.body()));
            checkSameBytes(fetched.body(), body, "presigned GET body");
        }
    }

    /** Sends a presigned request with java.net.http, carrying the headers the presigner signed. */
    private static HttpResponse<byte[]> send(SdkHttpRequest presigned, Map<String, List<String>> signedHeaders,
            byte[] body) throws IOException, InterruptedException {
        var publisher = body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body);
        var request = HttpRequest.newBuilder(presigned.getUri()).method(presigned.method().name(), publisher);
        signedHeaders.forEach((name, values) -> {
            if (!name.equalsIgnoreCase("host")) {
                values.forEach(value -> request.header(name, value));
            }
        });
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String excerpt(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        return text.length() > 300 ? text.substring(0, 300) : text;
    }

    void checksumDefaultScenario() {
        String key = "checksum/default.bin";
        byte[] body = randomBytes(CHECKSUM_BODY_SIZE);
        String expected = crc32Base64(body);
        PutObjectResponse put = s3.putObject(r -> r.bucket(bucket()).key(key), RequestBody.fromBytes(body));
        checkOptional(put::checksumCRC32, expected, "PutObject ChecksumCRC32");
        ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(
                r -> r.bucket(bucket()).key(key).checksumMode(ChecksumMode.ENABLED));
        checkSameBytes(got.asByteArray(), body, "GetObject body");
        checkOptional(() -> got.response().checksumCRC32(), expected, "GetObject ChecksumCRC32");
    }

    private static void checkOptional(Supplier<String> returned, String expected, String what) {
        String value = returned.get();
        check(value == null || value.equals(expected), what + " " + value + ", expected " + expected);
    }

    void checksumOffScenario() {
        String key = "checksum/off.bin";
        byte[] body = randomBytes(CHECKSUM_BODY_SIZE);
        try (S3Client plain = makeClient(endpoint, false)) {
            PutObjectResponse put = plain.putObject(r -> r.bucket(bucket()).key(key), RequestBody.fromBytes(body));
            check(quotedMd5(body).equals(put.eTag()), "PutObject ETag " + put.eTag() + ", expected " + quotedMd5(body));
            checkSameBytes(plain.getObjectAsBytes(r -> r.bucket(bucket()).key(key)).asByteArray(), body, "GetObject body");
        }
    }
}
