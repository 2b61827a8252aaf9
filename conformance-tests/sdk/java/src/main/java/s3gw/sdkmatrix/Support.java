package s3gw.sdkmatrix;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32;

/** Test data, digests and checks shared by the scenarios. */
final class Support {
    static final List<String> SCENARIOS = List.of(
            "bucket", "object", "range", "list-v2-delimiter", "multipart",
            "copy", "tagging", "presigned", "checksum-default", "checksum-off");

    private static final SecureRandom RANDOM = new SecureRandom();

    private Support() {}

    /** A scenario check that did not hold. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    static void check(boolean condition, String message) {
        if (!condition) {
            throw new Failure(message);
        }
    }

    static byte[] randomBytes(int size) {
        byte[] data = new byte[size];
        RANDOM.nextBytes(data);
        return data;
    }

    static String randomSuffix() {
        return HexFormat.of().formatHex(randomBytes(4));
    }

    static byte[] md5(byte[] data) {
        try {
            return MessageDigest.getInstance("MD5").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has MD5", e);
        }
    }

    static String quotedMd5(byte[] data) {
        return "\"" + HexFormat.of().formatHex(md5(data)) + "\"";
    }

    /** The S3 multipart ETag: md5 of the concatenated binary part md5s, then -N. */
    /** The S3 multipart ETag: md5 of the concatenated binary part md5s, then -N.
     *  With S3_MULTIPART_ETAG=ozone, Ozone's: md5 of the parts' hex md5s as text. */
    static String multipartEtag(List<byte[]> parts) {
        boolean ozone = "ozone".equals(System.getenv("S3_MULTIPART_ETAG"));
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            byte[] sum = md5(part);
            joined.writeBytes(ozone ? HexFormat.of().formatHex(sum).getBytes(StandardCharsets.US_ASCII) : sum);
        }
        return "\"" + HexFormat.of().formatHex(md5(joined.toByteArray())) + "-" + parts.size() + "\"";
    }

    static String crc32Base64(byte[] data) {
        CRC32 crc = new CRC32();
        crc.update(data);
        byte[] sum = ByteBuffer.allocate(4).putInt((int) crc.getValue()).array();
        return Base64.getEncoder().encodeToString(sum);
    }

    static void checkSameBytes(byte[] got, byte[] expected, String what) {
        check(Arrays.equals(got, expected), what + ": got " + got.length + " bytes, expected "
                + expected.length + " bytes with other content");
    }

    static byte[] concat(List<byte[]> parts) {
        ByteBuffer all = ByteBuffer.allocate(parts.stream().mapToInt(p -> p.length).sum());
        parts.forEach(all::put);
        return all.array();
    }
}
