//! Bucket policies: the JSON subset people use to open a bucket to the
//! public or to another key, parsed strictly and evaluated as AWS
//! documents it (an explicit Deny wins over any Allow).
//!
//! Understood: `Version` (2012-10-17, 2008-10-17), `Id`, and per statement
//! `Sid`, `Effect`, `Principal`, `Action` and `Resource`, each a string or
//! a list, with `*` and `?` wildcards in actions and resources. A principal
//! is `"*"`, or `{"AWS": ...}` naming `*`, access key ids, canonical ids
//! or `arn:aws:iam::<account>:user/<access key id>` (the account part is
//! not checked: this gateway has one account). `NotAction`,
//! `NotPrincipal`, `NotResource` and `Condition` are refused with
//! MalformedPolicy rather than ignored: ignoring them would widen access.

use std::cell::OnceCell;

use serde_json::Value;

use super::owner;
use crate::error::{Code, S3Error};

/// AWS's cap on a bucket policy.
pub const MAX_POLICY_BYTES: usize = 20 * 1024;

const ARN_PREFIX: &str = "arn:aws:s3:::";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Allow,
    Deny,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Principal {
    Anyone,
    /// Access key ids and canonical ids.
    Keys(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Statement {
    effect: Effect,
    principal: Principal,
    /// Lower-cased patterns (actions are case-insensitive).
    actions: Vec<String>,
    resources: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    statements: Vec<Statement>,
}

/// What a request asks to touch.
#[derive(Clone, Copy, Debug)]
pub enum Resource<'a> {
    Bucket(&'a str),
    Object(&'a str, &'a str),
}

impl<'a> Resource<'a> {
    /// The bucket the resource is in.
    pub fn bucket(self) -> &'a str {
        match self {
            Self::Bucket(bucket) | Self::Object(bucket, _) => bucket,
        }
    }
}

impl Policy {
    /// Parses and checks a policy for `bucket`.
    pub fn parse(bytes: &[u8], bucket: &str) -> Result<Self, S3Error> {
        if bytes.len() > MAX_POLICY_BYTES {
            return Err(malformed("Policies must be no more than 20 KB"));
        }
        let document: Value =
            serde_json::from_slice(bytes).map_err(|_| malformed("Policies must be valid JSON"))?;
        let Value::Object(fields) = &document else {
            return Err(malformed("Policies must be a JSON object"));
        };
        for (name, value) in fields {
            match name.as_str() {
                "Version" => match value.as_str() {
                    Some("2012-10-17" | "2008-10-17") => {}
                    _ => return Err(malformed("The policy must contain a valid version string")),
                },
                "Id" => {}
                "Statement" => {}
                other => return Err(malformed(format!("Unknown field {other}"))),
            }
        }
        let statements = match fields.get("Statement") {
            Some(Value::Array(list)) => list.iter().collect::<Vec<_>>(),
            Some(one @ Value::Object(_)) => vec![one],
            _ => return Err(malformed("Missing required field Statement")),
        };
        if statements.is_empty() {
            return Err(malformed("Missing required field Statement"));
        }
        let statements = statements
            .into_iter()
            .map(|s| statement(s, bucket))
            .collect::<Result<_, _>>()?;
        Ok(Self { statements })
    }

    /// The verdict of the statements that apply to `access_key` (`None`:
    /// anonymous) doing `action` (e.g. `GetObject`, for `s3:GetObject`) on `resource`:
    /// `Some(Deny)` if any Deny applies, else `Some(Allow)` if any Allow
    /// does, else `None`. `public` false leaves out the Allow statements
    /// open to everyone (RestrictPublicBuckets); Deny statements always
    /// count.
    pub fn evaluate(
        &self,
        access_key: Option<&str>,
        action: &str,
        resource: Resource<'_>,
        public: bool,
    ) -> Option<Effect> {
        let action = format!("s3:{}", action.to_ascii_lowercase());
        // Hashed only if a statement names keys (most policies open to all).
        let hashed = OnceCell::new();
        let canonical = || access_key.map(|key| hashed.get_or_init(|| owner::canonical_id(key)));
        let mut verdict = None;
        for statement in &self.statements {
            let principal = match &statement.principal {
                Principal::Anyone => public || statement.effect == Effect::Deny,
                Principal::Keys(keys) => keys
                    .iter()
                    .any(|key| Some(key.as_str()) == access_key || Some(key) == canonical()),
            };
            let applies = principal
                && statement.actions.iter().any(|p| glob(p, &action))
                && statement.resources.iter().any(|p| covers(p, resource));
            if applies {
                if statement.effect == Effect::Deny {
                    return Some(Effect::Deny);
                }
                verdict = Some(Effect::Allow);
            }
        }
        verdict
    }

    /// Whether an Allow is open to everyone: AWS's "public" policy (every
    /// condition that could narrow it is refused at parse time).
    pub fn is_public(&self) -> bool {
        self.statements
            .iter()
            .any(|s| s.effect == Effect::Allow && s.principal == Principal::Anyone)
    }
}

fn statement(value: &Value, bucket: &str) -> Result<Statement, S3Error> {
    let Value::Object(fields) = value else {
        return Err(malformed("A statement must be a JSON object"));
    };
    for name in fields.keys() {
        match name.as_str() {
            "Sid" | "Effect" | "Principal" | "Action" | "Resource" => {}
            "NotAction" | "NotPrincipal" | "NotResource" | "Condition" => {
                return Err(malformed(format!(
                    "{name} is not supported by this gateway's bucket policies"
                )));
            }
            other => return Err(malformed(format!("Unknown field {other}"))),
        }
    }
    let effect = match fields.get("Effect").and_then(Value::as_str) {
        Some("Allow") => Effect::Allow,
        Some("Deny") => Effect::Deny,
        _ => return Err(malformed("Invalid effect")),
    };
    let principal = principal(fields.get("Principal"))?;
    let actions = strings(fields.get("Action"), "Action")?
        .into_iter()
        .map(|action| {
            let lower = action.to_ascii_lowercase();
            let name = if lower == "*" {
                Some("*")
            } else {
                lower.strip_prefix("s3:")
            };
            match name {
                Some(name)
                    if !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'*' || b == b'?') =>
                {
                    Ok(if lower == "*" {
                        "s3:*".to_owned()
                    } else {
                        lower
                    })
                }
                _ => Err(malformed("Policy has invalid action")),
            }
        })
        .collect::<Result<_, _>>()?;
    let resources = strings(fields.get("Resource"), "Resource")?
        .into_iter()
        .map(|resource| {
            let path = resource
                .strip_prefix(ARN_PREFIX)
                .ok_or_else(|| malformed("Policy has invalid resource"))?;
            let bucket_part = path.split('/').next().unwrap_or_default();
            // `*` in the bucket part may match across the `/`.
            if glob(bucket_part, bucket) || (bucket_part.contains('*') && glob(path, bucket)) {
                Ok(resource)
            } else {
                Err(malformed("Policy has invalid resource"))
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(Statement {
        effect,
        principal,
        actions,
        resources,
    })
}

fn principal(value: Option<&Value>) -> Result<Principal, S3Error> {
    let invalid = || malformed("Invalid principal in policy");
    match value {
        Some(Value::String(star)) if star == "*" => Ok(Principal::Anyone),
        Some(Value::Object(fields)) => {
            let mut keys = Vec::new();
            for (kind, names) in fields {
                if kind != "AWS" && kind != "CanonicalUser" {
                    return Err(invalid());
                }
                for name in strings(Some(names), "Principal")? {
                    if name == "*" {
                        return Ok(Principal::Anyone);
                    }
                    keys.push(principal_key(&name).ok_or_else(invalid)?);
                }
            }
            if keys.is_empty() {
                return Err(invalid());
            }
            Ok(Principal::Keys(keys))
        }
        _ => Err(invalid()),
    }
}

/// The access key or canonical id a principal names: itself, or in an
/// ARN the user's name, or for an account's root the account id (which
/// matches a key only if it is one: this gateway has no accounts).
fn principal_key(name: &str) -> Option<String> {
    let key = match name.strip_prefix("arn:aws:iam::") {
        Some(rest) => match rest.split_once(":user/") {
            Some((_account, user)) => user,
            None => rest.strip_suffix(":root")?,
        },
        None => name,
    };
    let plausible = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric());
    plausible.then(|| key.to_owned())
}

fn strings(value: Option<&Value>, field: &str) -> Result<Vec<String>, S3Error> {
    let missing = || malformed(format!("Missing required field {field}"));
    match value {
        Some(Value::String(one)) => Ok(vec![one.clone()]),
        Some(Value::Array(list)) if !list.is_empty() => list
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(missing))
            .collect(),
        _ => Err(missing()),
    }
}

/// Whether resource pattern `pattern` applies to `resource`.
fn covers(pattern: &str, resource: Resource<'_>) -> bool {
    match resource {
        Resource::Bucket(bucket) => glob(pattern, &format!("{ARN_PREFIX}{bucket}")),
        Resource::Object(bucket, key) => glob(pattern, &format!("{ARN_PREFIX}{bucket}/{key}")),
    }
}

/// `*` matches any run of characters, `?` any one; everything else itself.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((star_p, star_t)) = star {
            pi = star_p + 1;
            ti = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

fn malformed(message: impl Into<String>) -> S3Error {
    S3Error::new(Code::MalformedPolicy, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Policy, S3Error> {
        Policy::parse(text.as_bytes(), "b")
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
        let get = |who, resource| policy.evaluate(who, "GetObject", resource, true);
        assert_eq!(get(None, Resource::Object("b", "k")), Some(Effect::Allow));
        assert_eq!(
            get(Some("ALT"), Resource::Object("b", "k")),
            Some(Effect::Allow)
        );
        assert_eq!(get(None, Resource::Bucket("b")), None);
        assert_eq!(
            policy.evaluate(None, "PutObject", Resource::Object("b", "k"), true),
            None
        );
        assert_eq!(
            policy.evaluate(None, "GetObject", Resource::Object("b", "k"), false),
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
        let eval = |who, action, resource| policy.evaluate(who, action, resource, true);
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
            parse(&by_id).unwrap().evaluate(
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
        let eval = |who, key, public| {
            policy.evaluate(who, "GetObject", Resource::Object("b", key), public)
        };
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
            r#"{"Statement":[{"Effect":"Allow","NotPrincipal":"*","Action":"s3:GetObject",
               "Resource":"arn:aws:s3:::b/*"}]}"#,
            r#"{"Statement":[{"Effect":"Allow","Principal":"*","NotAction":"s3:GetObject",
               "Resource":"arn:aws:s3:::b/*"}]}"#,
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
}
