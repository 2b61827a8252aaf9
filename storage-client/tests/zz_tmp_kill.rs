use futures::TryStreamExt;
use std::process::Command;
use std::time::Instant;
use storage_client::ozone::dn_client::{DnClient, DnConfig};
use storage_client::ozone::om_client::{OmClient, OmConfig};

#[tokio::test]
async fn tmp_kill_dn() {
    let om = OmClient::new(&OmConfig::new(vec!["127.0.0.1:8981".into()])).unwrap();
    let bucket = format!("kill-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    om.create_bucket("k", &bucket).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("d");
    std::fs::write(&f, vec![7u8; 300_000]).unwrap();
    let dev = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance-tests/ozone/ozone-dev");
    assert!(Command::new(dev).args(["sh", "key", "put", &format!("/s3v/{bucket}/k")]).arg(&f).status().unwrap().success());
    let key = om.get_key_info("k", &bucket, "k", false).await.unwrap();
    let dn = DnClient::new(DnConfig::default());
    let read = |dn: DnClient, b| async move { let s = dn.read(&b, 0..300_000).await?; let v: Vec<_> = s.try_collect().await?; Ok::<usize, storage_client::StorageError>(v.iter().map(|x| x.len()).sum()) };
    println!("before: {:?}", read(dn.clone(), key.blocks[0].clone()).await);
    assert!(Command::new(dev).args(["kill", "dn"]).status().unwrap().success());
    let t = Instant::now();
    println!("killed: {:?} after {:?}", read(dn.clone(), key.blocks[0].clone()).await, t.elapsed());
    let t = Instant::now();
    println!("om while dn down: {:?} after {:?}", om.get_key_info("k", &bucket, "k", false).await.map(|k| k.blocks.len()), t.elapsed());
    assert!(Command::new(dev).args(["start"]).status().unwrap().success());
    let t = Instant::now();
    println!("restarted: {:?} after {:?}", read(dn.clone(), key.blocks[0].clone()).await, t.elapsed());
}
