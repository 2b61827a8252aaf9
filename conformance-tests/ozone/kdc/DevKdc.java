import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;

import org.apache.kerby.kerberos.kerb.client.KrbClient;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;
import org.apache.kerby.kerberos.kerb.type.ticket.TgtTicket;

/**
 * The secure dev cluster's Kerberos KDC: Apache Kerby's SimpleKdcServer on
 * loopback, TCP only.
 *
 * <pre>DevKdc DIR REALM PORT USER SERVICE...</pre>
 *
 * Writes DIR/krb5.conf, one keytab per principal in DIR/keytabs (named after
 * the principal's first component: om/localhost -> om.keytab), a ticket cache
 * for USER in DIR/USER.ccache (what the Ozone shell logs in with; no kinit
 * binary is needed), then DIR/ready, and serves until killed. Principals live
 * in memory: every start makes new keys, so the KDC starts only together
 * with the cluster.
 */
public final class DevKdc {
  private DevKdc() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 4) {
      System.err.println("usage: DevKdc DIR REALM PORT USER SERVICE...");
      System.exit(2);
    }
    File dir = new File(args[0]);
    String realm = args[1];
    int port = Integer.parseInt(args[2]);
    String user = args[3];
    String[] services = Arrays.copyOfRange(args, 4, args.length);

    File keytabs = new File(dir, "keytabs");
    Files.createDirectories(keytabs.toPath());
    Files.deleteIfExists(new File(dir, "ready").toPath());

    SimpleKdcServer kdc = new SimpleKdcServer();
    kdc.setWorkDir(dir);
    kdc.setKdcRealm(realm);
    kdc.setKdcHost("127.0.0.1");
    kdc.setKdcTcpPort(port);
    kdc.setAllowUdp(false);
    kdc.init();
    kdc.start();

    File userKeytab = new File(keytabs, user + ".keytab");
    kdc.createPrincipal(user);
    exportFresh(kdc, user + "@" + realm, userKeytab);
    for (String service : services) {
      kdc.createPrincipal(service);
      exportFresh(kdc, service + "@" + realm, new File(keytabs, service.split("/")[0] + ".keytab"));
    }

    // Hadoop and the JDK read the standard krb5.conf; TCP only, no DNS.
    String krb5 = String.join("\n",
        "[libdefaults]",
        "  default_realm = " + realm,
        "  udp_preference_limit = 1",
        "  dns_lookup_kdc = false",
        "  dns_lookup_realm = false",
        "  dns_canonicalize_hostname = false",
        "  rdns = false",
        "  forwardable = true",
        "[realms]",
        "  " + realm + " = {",
        "    kdc = 127.0.0.1:" + port,
        "  }",
        "");
    Path conf = new File(dir, "krb5.conf").toPath();
    Path staged = new File(dir, "krb5.conf.tmp").toPath();
    Files.write(staged, krb5.getBytes(StandardCharsets.UTF_8));
    Files.move(staged, conf, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

    KrbClient client = kdc.getKrbClient();
    TgtTicket tgt = client.requestTgt(user + "@" + realm, userKeytab);
    File ccache = new File(dir, user + ".ccache");
    Files.deleteIfExists(ccache.toPath());
    client.storeTicket(tgt, ccache);

    Files.createFile(new File(dir, "ready").toPath());
    System.out.println("DevKdc: realm " + realm + " on 127.0.0.1:" + port + ", keytabs in " + keytabs);
    Thread.currentThread().join();
  }

  private static void exportFresh(SimpleKdcServer kdc, String principal, File keytab) throws Exception {
    Files.deleteIfExists(keytab.toPath());
    kdc.exportPrincipal(principal, keytab);
    keytab.setReadable(false, false);
    keytab.setReadable(true, true);
  }
}
