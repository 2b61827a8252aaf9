package s3gw.sdkmatrix;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.util.VersionInfo;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Runs the SDK matrix scenarios with the AWS SDK for Java v2 and prints one JSON
 * line per scenario (see ../README.md). Arguments select scenarios; none runs all.
 */
public final class Matrix {
    /** A scenario body; checked exceptions are results too. */
    private interface Body {
        void run() throws Exception;
    }

    private Matrix() {}

    public static void main(String[] args) {
        List<String> wanted = new ArrayList<>();
        for (String arg : args) {
            if (!Support.SCENARIOS.contains(arg)) {
                System.err.println("unknown scenario " + arg + "; known: " + Support.SCENARIOS);
                System.exit(2);
            }
        }
        Support.SCENARIOS.stream().filter(s -> args.length == 0 || List.of(args).contains(s)).forEach(wanted::add);
        Endpoint endpoint = Endpoint.fromEnv();
        try (S3Client s3 = Scenarios.makeClient(endpoint, true)) {
            Scenarios scenarios = new Scenarios(endpoint, s3, "java-v2-" + Support.randomSuffix());
            Map<String, Body> bodies = new LinkedHashMap<>();
            bodies.put("bucket", scenarios::bucketScenario);
            bodies.put("object", scenarios::objectScenario);
            bodies.put("range", scenarios::rangeScenario);
            bodies.put("list-v2-delimiter", scenarios::listScenario);
            bodies.put("multipart", scenarios::multipartScenario);
            bodies.put("copy", scenarios::copyScenario);
            bodies.put("tagging", scenarios::taggingScenario);
            bodies.put("presigned", scenarios::presignedScenario);
            bodies.put("checksum-default", scenarios::checksumDefaultScenario);
            bodies.put("checksum-off", scenarios::checksumOffScenario);
            String setupError = null;
            if (wanted.stream().anyMatch(s -> !s.equals("bucket"))) {
                try {
                    scenarios.createBucket(scenarios.bucket());
                } catch (SdkException e) {
                    setupError = "CreateBucket " + scenarios.bucket() + ": " + e.getMessage();
                }
            }
            try {
                for (String name : wanted) {
                    if (setupError != null && !name.equals("bucket")) {
                        emit(name, false, "setup failed: " + setupError);
                        continue;
                    }
                    try {
                        bodies.get(name).run();
                        emit(name, true, "");
                    } catch (Support.Failure e) {
                        emit(name, false, e.getMessage());
                    } catch (Exception e) {
                        emit(name, false, e.getClass().getSimpleName() + ": " + e.getMessage());
                    }
                }
            } finally {
                removeBucket(s3, scenarios.bucket());
                removeBucket(s3, scenarios.spareBucket());
            }
        }
    }

    private static void emit(String scenario, boolean ok, String detail) {
        String text = detail == null ? "" : detail;
        if (text.length() > 600) {
            text = text.substring(0, 600) + "...";
        }
        System.out.println("{\"sdk\":\"java-v2\",\"version\":" + json(VersionInfo.SDK_VERSION)
                + ",\"scenario\":" + json(scenario) + ",\"ok\":" + ok + ",\"detail\":" + json(text) + "}");
        System.out.flush();
    }

    private static String json(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    /** Best-effort cleanup: every object and pending upload, then the bucket. */
    private static void removeBucket(S3Client s3, String bucket) {
        try {
            s3.headBucket(b -> b.bucket(bucket));
        } catch (SdkException e) {
            return;
        }
        try {
            for (S3Object object : s3.listObjectsV2Paginator(r -> r.bucket(bucket)).contents()) {
                s3.deleteObject(r -> r.bucket(bucket).key(object.key()));
            }
        } catch (SdkException e) {
            System.err.println("java-v2: cleanup of objects in " + bucket + " failed: " + e.getMessage());
        }
        try {
            for (MultipartUpload upload : s3.listMultipartUploads(r -> r.bucket(bucket)).uploads()) {
                s3.abortMultipartUpload(r -> r.bucket(bucket).key(upload.key()).uploadId(upload.uploadId()));
            }
        } catch (SdkException e) {
            System.err.println("java-v2: cleanup of uploads in " + bucket + " failed: " + e.getMessage());
        }
        try {
            s3.deleteBucket(b -> b.bucket(bucket));
        } catch (SdkException e) {
            System.err.println("java-v2: cleanup could not delete bucket " + bucket + ": " + e.getMessage());
        }
    }
}
