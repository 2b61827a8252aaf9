use super::*;
use context::NoRequest;

fn parse(text: &str) -> Result<Policy, S3Error> {
    Policy::parse(text.as_bytes(), "b")
}

impl Policy {
    /// The verdict for a request with no condition keys.
    fn eval(
        &self,
        who: Option<&str>,
        action: &str,
        resource: Resource<'_>,
        public: bool,
    ) -> Option<Effect> {
        self.evaluate(who, action, resource, public, &NoRequest)
            .unwrap()
    }
}

const PUBLIC_READ: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
    "Principal":"*","Action":["s3:GetObject"],"Resource":"arn:aws:s3:::b/*"}]}"#;

#[test]
fn globs_match_as_iam_does() {
    assert!(glob("arn:aws:s3:::b/*", "arn:aws:s3:::b/x/y"));
    assert!(glob("s3:get*", "s3:getobject"));
    assert!(glob("a?c", "abc"));
    assert!(!glob("a?c", "ac"));
    assert!(glob("*", ""));
    assert!(!glob("arn:aws:s3:::b/*", "arn:aws:s3:::bb/x"));
    assert!(glob("*a*b", "xxaxxb"));
}

#[test]
fn public_read_lets_anyone_get_and_nothing_else() {
    let policy = parse(PUBLIC_READ).unwrap();
    assert!(policy.is_public());
    let get = |who, resource| policy.eval(who, "GetObject", resource, true);
    assert_eq!(get(None, Resource::Object("b", "k")), Some(Effect::Allow));
    assert_eq!(
        get(Some("ALT"), Resource::Object("b", "k")),
        Some(Effect::Allow)
    );
    assert_eq!(get(None, Resource::Bucket("b")), None);
    assert_eq!(
        policy.eval(None, "PutObject", Resource::Object("b", "k"), true),
        None
    );
    assert_eq!(
        policy.eval(None, "GetObject", Resource::Object("b", "k"), false),
        None,
        "RestrictPublicBuckets leaves public statements out"
    );
}

#[test]
fn deny_beats_allow_and_principals_name_keys() {
    let policy = parse(
        r#"{"Version":"2012-10-17","Statement":[
        {"Effect":"Allow","Principal":{"AWS":["ALTKEY"]},"Action":"s3:*",
         "Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]},
        {"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::123:user/ALTKEY"},
         "Action":"s3:Delete*","Resource":"arn:aws:s3:::b/keep/*"}]}"#,
    )
    .unwrap();
    assert!(!policy.is_public());
    let eval = |who, action, resource| policy.eval(who, action, resource, true);
    assert_eq!(
        eval(Some("ALTKEY"), "ListBucket", Resource::Bucket("b")),
        Some(Effect::Allow)
    );
    assert_eq!(
        eval(Some("ALTKEY"), "DeleteObject", Resource::Object("b", "x")),
        Some(Effect::Allow)
    );
    assert_eq!(
        eval(
            Some("ALTKEY"),
            "deleteobject",
            Resource::Object("b", "keep/x")
        ),
        Some(Effect::Deny)
    );
    assert_eq!(
        eval(Some("OTHER"), "ListBucket", Resource::Bucket("b")),
        None
    );
    assert_eq!(eval(None, "ListBucket", Resource::Bucket("b")), None);
    let by_id = format!(
        r#"{{"Statement":{{"Effect":"Allow","Principal":{{"CanonicalUser":"{}"}},
        "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}}}}"#,
        owner::canonical_id("ALTKEY")
    );
    assert_eq!(
        parse(&by_id).unwrap().eval(
            Some("ALTKEY"),
            "GetObject",
            Resource::Object("b", "k"),
            true
        ),
        Some(Effect::Allow)
    );
}

#[test]
fn account_roots_name_a_key_and_restriction_keeps_deny_statements() {
    let policy = parse(
        r#"{"Statement":[
        {"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::ALTKEY:root"},"Action":"s3:GetObject",
         "Resource":"arn:aws:s3:::b/*"},
        {"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/secret"}]}"#,
    )
    .unwrap();
    let eval = |who, key, public| policy.eval(who, "GetObject", Resource::Object("b", key), public);
    assert_eq!(eval(Some("ALTKEY"), "k", false), Some(Effect::Allow));
    assert_eq!(eval(Some("ALTKEY"), "secret", false), Some(Effect::Deny));
    assert_eq!(eval(Some("S3TENANT1"), "k", true), None);
}

#[test]
fn what_is_not_understood_is_refused() {
    for bad in [
        "not json",
        "[]",
        r#"{"Version":"2012-10-17"}"#,
        r#"{"Version":"2020-01-01","Statement":[]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject",
           "Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{}}}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":"*","NotPrincipal":"*",
           "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject",
           "NotAction":"s3:PutObject","Resource":"arn:aws:s3:::b/*"}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject"}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Action":"s3:GetObject",
           "Resource":"arn:aws:s3:::b/*"}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject",
           "NotResource":"arn:aws:s3:::other/*"}]}"#,
        r#"{"Statement":[{"Effect":"Maybe","Principal":"*","Action":"s3:GetObject",
           "Resource":"arn:aws:s3:::b/*"}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ec2:Run",
           "Resource":"arn:aws:s3:::b/*"}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject",
           "Resource":"arn:aws:s3:::other/*"}]}"#,
        r#"{"Statement":[{"Effect":"Allow","Principal":{"Federated":"x"},
           "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}"#,
    ] {
        assert_eq!(parse(bad).unwrap_err().code, "MalformedPolicy", "{bad}");
    }
    let huge = format!("{{\"Id\":\"{}\"}}", "x".repeat(MAX_POLICY_BYTES));
    assert_eq!(parse(&huge).unwrap_err().code, "MalformedPolicy");
}

/// A request whose keys have the values listed; the others are absent.
struct Request(Vec<(Key, Lookup<'static>)>);

impl Context for Request {
    fn lookup(&self, key: &Key, _: &str) -> Lookup<'_> {
        let found = self.0.iter().find(|(k, _)| k == key);
        found.map_or(Lookup::Absent, |(_, v)| v.clone())
    }
}

fn one(key: Key, value: &'static str) -> (Key, Lookup<'static>) {
    (key, Lookup::Values(vec![Cow::Borrowed(value)]))
}

#[test]
fn not_elements_apply_to_all_they_do_not_name() {
    let policy = parse(
        r#"{"Version":"2012-10-17","Statement":[
        {"Effect":"Allow","Principal":"*","NotAction":"s3:Delete*",
         "NotResource":"arn:aws:s3:::b/private/*"},
        {"Effect":"Deny","NotPrincipal":{"AWS":"ADMINKEY"},"Action":"s3:PutObject",
         "Resource":"arn:aws:s3:::b/*"}]}"#,
    )
    .unwrap();
    let object = |key| Resource::Object("b", key);
    assert_eq!(
        policy.eval(None, "GetObject", object("k"), true),
        Some(Effect::Allow)
    );
    assert_eq!(policy.eval(None, "DeleteObject", object("k"), true), None);
    assert_eq!(
        policy.eval(None, "GetObject", object("private/k"), true),
        None
    );
    assert_eq!(
        policy.eval(Some("ALTKEY"), "PutObject", object("k"), true),
        Some(Effect::Deny)
    );
    assert_eq!(
        policy.eval(None, "PutObject", object("k"), true),
        Some(Effect::Deny),
        "NotPrincipal leaves out only the keys it names"
    );
    assert_eq!(
        policy.eval(Some("ADMINKEY"), "PutObject", object("k"), true),
        Some(Effect::Allow)
    );
    let not_principal_allow = parse(
        r#"{"Statement":{"Effect":"Allow","NotPrincipal":{"AWS":"ALTKEY"},
        "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}}"#,
    )
    .unwrap();
    assert!(not_principal_allow.is_public());
    assert_eq!(
        not_principal_allow.eval(None, "GetObject", object("k"), true),
        Some(Effect::Allow)
    );
    assert_eq!(
        not_principal_allow.eval(Some("ALTKEY"), "GetObject", object("k"), true),
        None
    );
}

#[test]
fn conditions_decide_whether_a_statement_applies() {
    let policy = parse(
        r#"{"Version":"2012-10-17","Statement":[
        {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*",
         "Condition":{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}},
        {"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b/*",
         "Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}"#,
    )
    .unwrap();
    assert!(!policy.is_public(), "narrowed to fixed addresses");
    let get = |request: &Request| {
        policy
            .evaluate(None, "GetObject", Resource::Object("b", "k"), true, request)
            .unwrap()
    };
    let inside = Request(vec![
        one(Key::SourceIp, "192.0.2.9"),
        one(Key::SecureTransport, "true"),
    ]);
    assert_eq!(get(&inside), Some(Effect::Allow));
    let plain = Request(vec![
        one(Key::SourceIp, "192.0.2.9"),
        one(Key::SecureTransport, "false"),
    ]);
    assert_eq!(get(&plain), Some(Effect::Deny));
    let outside = Request(vec![
        one(Key::SourceIp, "198.51.100.1"),
        one(Key::SecureTransport, "true"),
    ]);
    assert_eq!(get(&outside), None);
    assert_eq!(
        policy
            .evaluate(
                None,
                "GetObject",
                Resource::Object("b", "k"),
                false,
                &inside
            )
            .unwrap(),
        Some(Effect::Allow),
        "RestrictPublicBuckets keeps a statement that is not public"
    );
}

#[test]
fn principal_keys_come_from_the_caller() {
    let policy = parse(
        r#"{"Version":"2012-10-17","Statement":[
        {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*",
         "Condition":{"StringEquals":{"aws:username":"ALTKEY","aws:PrincipalType":"User"},
                      "ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*:user/ALT*"}}},
        {"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::b",
         "Condition":{"StringEquals":{"aws:userid":"anonymous","aws:PrincipalType":"Anonymous"},
                      "Null":{"aws:username":"true"}}}]}"#,
    )
    .unwrap();
    assert!(!policy.statements[0].is_public(), "narrowed to one user");
    assert!(
        policy.statements[1].is_public(),
        "narrowed to the anonymous caller: open to anyone"
    );
    let object = Resource::Object("b", "k");
    assert_eq!(
        policy.eval(Some("ALTKEY"), "GetObject", object, true),
        Some(Effect::Allow)
    );
    assert_eq!(
        policy.eval(Some("OTHERKEY"), "GetObject", object, true),
        None
    );
    assert_eq!(policy.eval(None, "GetObject", object, true), None);
    assert_eq!(
        policy.eval(None, "ListBucket", Resource::Bucket("b"), true),
        Some(Effect::Allow)
    );
    assert_eq!(
        policy.eval(Some("ALTKEY"), "ListBucket", Resource::Bucket("b"), true),
        None
    );
}

#[test]
fn values_not_known_yet_fail_safe_or_ask_for_the_objects_tags() {
    let policy = parse(
        r#"{"Version":"2012-10-17","Statement":[
        {"Effect":"Allow","Principal":"*","Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::b/*",
         "Condition":{"StringEquals":{"s3:RequestObjectTag/team":"blue"}}},
        {"Effect":"Deny","Principal":"*","Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::b/locked/*",
         "Condition":{"StringEquals":{"s3:RequestObjectTag/team":"red"}}},
        {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*",
         "Condition":{"StringEquals":{"s3:ExistingObjectTag/public":"yes"}}}]}"#,
    )
    .unwrap();
    let body_tags = Request(vec![(
        Key::RequestObjectTag("team".into()),
        Lookup::Unknown,
    )]);
    let tag = |key| {
        policy.evaluate(
            None,
            "PutObjectTagging",
            Resource::Object("b", key),
            true,
            &body_tags,
        )
    };
    assert_eq!(
        tag("k"),
        Ok(None),
        "an Allow on an unknown value grants nothing"
    );
    assert_eq!(
        tag("locked/k"),
        Ok(Some(Effect::Deny)),
        "a Deny on one binds"
    );
    let unloaded = Request(vec![(
        Key::ExistingObjectTag("public".into()),
        Lookup::Unknown,
    )]);
    let get = |request: &Request| {
        policy.evaluate(None, "GetObject", Resource::Object("b", "k"), true, request)
    };
    assert_eq!(get(&unloaded), Err(NeedsObjectTags));
    let loaded = Request(vec![one(Key::ExistingObjectTag("public".into()), "yes")]);
    assert_eq!(get(&loaded), Ok(Some(Effect::Allow)));
    assert_eq!(get(&Request(Vec::new())), Ok(None));
}

#[test]
fn a_condition_that_narrows_nothing_leaves_a_statement_public() {
    for condition in [
        r#"{"StringEquals":{"aws:Referer":"https://example.com/"}}"#,
        r#"{"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}}"#,
        r#"{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}"#,
        r#"{"StringLike":{"aws:userid":"*"}}"#,
    ] {
        let text = format!(
            r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow","Principal":"*",
            "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{condition}}}}}"#
        );
        assert!(parse(&text).unwrap().is_public(), "{condition}");
    }
}
