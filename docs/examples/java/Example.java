// Java SDK v2 against s3-gateway: upload, download, list, presign, multipart.
//   (with software.amazon.awssdk:s3 on the class path)
//   AWS_ENDPOINT_URL=http://127.0.0.1:9878 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... java -cp CLASSPATH Example.java
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

public class Example {
    static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    static void check(boolean holds, String what) {
        if (!holds) throw new IllegalStateException(what);
    }

    public static void main(String[] args) throws Exception {
        URI endpoint = URI.create(env("AWS_ENDPOINT_URL", "http://127.0.0.1:9878"));
        Region region = Region.of(env("AWS_REGION", "us-east-1"));
        S3Client s3 = S3Client.builder()
                .endpointOverride(endpoint)
                .region(region)
                .credentialsProvider(EnvironmentVariableCredentialsProvider.create())
                .forcePathStyle(true) // http://host/bucket/key works without wildcard DNS
                .build();
        String bucket = "example-java-" + UUID.randomUUID().toString().substring(0, 8);
        s3.createBucket(b -> b.bucket(bucket));

        // Upload and download.
        s3.putObject(b -> b.bucket(bucket).key("hello.txt"), RequestBody.fromString("hello, s3-gateway"));
        String back = s3.getObjectAsBytes(b -> b.bucket(bucket).key("hello.txt")).asUtf8String();
        check(back.equals("hello, s3-gateway"), "read back " + back);

        // List.
        List<String> keys = s3.listObjectsV2(b -> b.bucket(bucket)).contents().stream().map(S3Object::key).toList();
        check(keys.equals(List.of("hello.txt")), "listed " + keys);

        // A presigned URL: anyone holding it may GET the object for an hour.
        try (S3Presigner presigner = S3Presigner.builder()
                .endpointOverride(endpoint)
                .region(region)
                .credentialsProvider(EnvironmentVariableCredentialsProvider.create())
                .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(true).build())
                .build()) {
            URI url = presigner.presignGetObject(p -> p.signatureDuration(Duration.ofHours(1))
                    .getObjectRequest(g -> g.bucket(bucket).key("hello.txt"))).url().toURI();
            HttpResponse<String> answer = HttpClient.newHttpClient()
                    .send(HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.ofString());
            check(answer.body().equals("hello, s3-gateway"), "presigned GET answered " + answer.statusCode());
        }

        // Multipart: parts of at least 5 MiB, but the last.
        byte[][] parts = {new byte[5 * 1024 * 1024], new byte[1024]};
        Arrays.fill(parts[0], (byte) 'a');
        Arrays.fill(parts[1], (byte) 'b');
        String upload = s3.createMultipartUpload(b -> b.bucket(bucket).key("big.bin")).uploadId();
        List<CompletedPart> done = new ArrayList<>();
        for (int index = 0; index < parts.length; index++) {
            int number = index + 1;
            String etag = s3.uploadPart(b -> b.bucket(bucket).key("big.bin").uploadId(upload).partNumber(number),
                    RequestBody.fromBytes(parts[index])).eTag();
            done.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
        }
        s3.completeMultipartUpload(b -> b.bucket(bucket).key("big.bin").uploadId(upload)
                .multipartUpload(m -> m.parts(done)));
        long size = s3.headObject(b -> b.bucket(bucket).key("big.bin")).contentLength();
        check(size == 5 * 1024 * 1024 + 1024, "size " + size);

        // Clean up.
        for (String key : List.of("hello.txt", "big.bin")) s3.deleteObject(b -> b.bucket(bucket).key(key));
        s3.deleteBucket(b -> b.bucket(bucket));
        System.out.println("ok");
    }
}
