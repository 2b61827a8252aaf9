package s3gw.sdkmatrix;

import java.util.ArrayList;
import java.util.List;

/** The S3 endpoint under test, from S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY and S3_REGION. */
record Endpoint(String url, String accessKey, String secretKey, String region) {
    static Endpoint fromEnv() {
        List<String> missing = new ArrayList<>();
        for (String name : List.of("S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY")) {
            String value = System.getenv(name);
            if (value == null || value.isEmpty()) {
                missing.add(name);
            }
        }
        if (!missing.isEmpty()) {
            System.err.println("missing environment: " + String.join(", ", missing));
            System.exit(2);
        }
        String region = System.getenv("S3_REGION");
        return new Endpoint(
                System.getenv("S3_ENDPOINT").replaceAll("/+$", ""),
                System.getenv("S3_ACCESS_KEY"),
                System.getenv("S3_SECRET_KEY"),
                region == null || region.isEmpty() ? "us-east-1" : region);
    }
}
