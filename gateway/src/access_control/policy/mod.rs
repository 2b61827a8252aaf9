//! Bucket policies: the JSON subset people use to open a bucket to the
//! public or to another key, or to fence it in by where a request comes
//! from and what it carries, parsed strictly and evaluated as AWS
//! documents it (an explicit Deny wins over any Allow).
//!
//! Understood: `Version` (2012-10-17, 2008-10-17), `Id`, and per statement
//! `Sid`, `Effect`, `Principal` or `NotPrincipal`, `Action` or
//! `NotAction`, `Resource` or `NotResource`, each a string or a list, with
//! `*` and `?` wildcards in actions and resources, and `Condition` (see
//! [`condition`] for the operators, [`key`] for the keys, [`context`] for
//! where their values come from). A principal is `"*"`, or `{"AWS": ...}`
//! naming `*`, access key ids, canonical ids or
//! `arn:aws:iam::<account>:user/<access key id>` (the account part is not
//! checked: this gateway has no accounts, each key is its own, so
//! `arn:aws:iam::<key>:root` names the key too). Anything else (an
//! unknown field, operator or condition key, a policy variable) is
//! refused with MalformedPolicy naming it rather than ignored: ignoring
//! it would widen access or narrow a Deny.

pub mod condition;
pub mod context;
pub mod key;
pub mod operator;

use std::borrow::Cow;
use std::cell::OnceCell;

use serde_json::Value;

use super::owner;
use crate::error::{Code, S3Error};
use condition::Condition;
use context::{Context, Lookup};
use key::Key;

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

#[derive(Clone, Debug, PartialEq)]
struct Statement {
    effect: Effect,
    principal: Element<Principal>,
    /// Lower-cased patterns (actions are case-insensitive).
    actions: Element<Vec<String>>,
    resources: Element<Vec<String>>,
    conditions: Vec<Condition>,
}

/// A statement's Principal, Action or Resource, or (`inverted`) its
/// `Not...` form, which applies to all that the list does not name.
#[derive(Clone, Debug, PartialEq)]
struct Element<T> {
    named: T,
    inverted: bool,
}

/// A policy decision that depends on the object's current tags (an
/// applicable statement tests `s3:ExistingObjectTag`): the caller loads
/// them and asks again, with them in the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeedsObjectTags;

#[derive(Clone, Debug, PartialEq)]
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
        // Only 2012-10-17 has policy variables; before it `${` is text.
        let variables = fields.get("Version").and_then(Value::as_str) == Some("2012-10-17");
        let statements = statements
            .into_iter()
            .map(|s| statement(s, bucket, variables))
            .collect::<Result<_, _>>()?;
        Ok(Self { statements })
    }

    /// The verdict of the statements that apply to `access_key` (`None`:
    /// anonymous) doing `action` (e.g. `GetObject`, for `s3:GetObject`) on
    /// `resource` in the request `context`: `Some(Deny)` if any Deny
    /// applies, else `Some(Allow)` if any Allow does, else `None`.
    /// `public` false leaves out the public Allow statements
    /// (RestrictPublicBuckets); Deny statements always count. A condition
    /// on a value not known yet fails safe: its Deny applies, its Allow
    /// does not, unless it is the object's tags, which the caller can
    /// load ([`NeedsObjectTags`]).
    pub fn evaluate(
        &self,
        access_key: Option<&str>,
        action: &str,
        resource: Resource<'_>,
        public: bool,
        context: &dyn Context,
    ) -> Result<Option<Effect>, NeedsObjectTags> {
        let iam_action = format!("s3:{}", action.to_ascii_lowercase());
        // Hashed only if a statement names keys (most policies open to all).
        let hashed = OnceCell::new();
        let canonical = || access_key.map(|key| hashed.get_or_init(|| owner::canonical_id(key)));
        let lookup = |key: &Key| match principal_value(key, access_key) {
            Some(value) => value,
            None => context.lookup(key, action),
        };
        let mut verdict = None;
        let mut needs_tags = false;
        for statement in &self.statements {
            if !public && statement.is_public() {
                continue;
            }
            let principal = match &statement.principal.named {
                Principal::Anyone => true,
                Principal::Keys(keys) => keys
                    .iter()
                    .any(|key| Some(key.as_str()) == access_key || Some(key) == canonical()),
            };
            let action_named = statement.actions.named.iter().any(|p| glob(p, &iam_action));
            let resource_named = statement
                .resources
                .named
                .iter()
                .any(|p| covers(p, resource));
            let applies = principal != statement.principal.inverted
                && action_named != statement.actions.inverted
                && resource_named != statement.resources.inverted;
            if !applies {
                continue;
            }
            let holds = match condition::all_hold(&statement.conditions, lookup) {
                Some(holds) => holds,
                None if statement.reads_unloaded_tags(&lookup) => {
                    needs_tags = true;
                    continue;
                }
                None => statement.effect == Effect::Deny,
            };
            if holds {
                if statement.effect == Effect::Deny {
                    return Ok(Some(Effect::Deny));
                }
                verdict = Some(Effect::Allow);
            }
        }
        match needs_tags {
            true => Err(NeedsObjectTags),
            false => Ok(verdict),
        }
    }

    /// Whether an Allow is open to everyone: AWS's "public" policy.
    pub fn is_public(&self) -> bool {
        self.statements.iter().any(Statement::is_public)
    }

    /// Whether a statement has a condition (a decision that may depend on
    /// the request, not just on who asks for what).
    pub fn has_conditions(&self) -> bool {
        self.statements.iter().any(|s| !s.conditions.is_empty())
    }
}

impl Statement {
    /// An Allow open to everyone (`"*"`, or all but some with
    /// NotPrincipal), unless a condition narrows it to fixed values of a
    /// key that identifies the caller or its network.
    fn is_public(&self) -> bool {
        let everyone = self.principal.inverted || self.principal.named == Principal::Anyone;
        self.effect == Effect::Allow
            && everyone
            && !self.conditions.iter().any(Condition::narrows_public_access)
    }

    /// Whether a condition tests the object's tags and they are not loaded.
    fn reads_unloaded_tags<'a>(&self, lookup: &impl Fn(&Key) -> Lookup<'a>) -> bool {
        self.conditions.iter().any(|c| {
            matches!(c.key(), Key::ExistingObjectTag(_)) && lookup(c.key()) == Lookup::Unknown
        })
    }
}

/// The keys about who asks: `aws:username` and `aws:userid` are its access
/// key (an anonymous caller's userid is `anonymous`, it has no username),
/// `aws:PrincipalArn` the user ARN that names the key, in the key's own
/// account (see the module comment). `None` for the other keys.
fn principal_value<'a>(key: &Key, access_key: Option<&'a str>) -> Option<Lookup<'a>> {
    let one = |value: Cow<'a, str>| Lookup::Values(vec![value]);
    Some(match (key, access_key) {
        (Key::Username | Key::Userid, Some(key)) => one(Cow::Borrowed(key)),
        (Key::Userid, None) => one(Cow::Borrowed("anonymous")),
        (Key::PrincipalArn, Some(key)) => one(Cow::Owned(format!("arn:aws:iam::{key}:user/{key}"))),
        (Key::PrincipalType, Some(_)) => one(Cow::Borrowed("User")),
        (Key::PrincipalType, None) => one(Cow::Borrowed("Anonymous")),
        (Key::Username | Key::PrincipalArn, None) => Lookup::Absent,
        _ => return None,
    })
}

fn statement(value: &Value, bucket: &str, variables: bool) -> Result<Statement, S3Error> {
    let Value::Object(fields) = value else {
        return Err(malformed("A statement must be a JSON object"));
    };
    for name in fields.keys() {
        match name.as_str() {
            "Sid" | "Effect" | "Principal" | "NotPrincipal" | "Action" | "NotAction"
            | "Resource" | "NotResource" | "Condition" => {}
            other => return Err(malformed(format!("Unknown field {other}"))),
        }
    }
    let effect = match fields.get("Effect").and_then(Value::as_str) {
        Some("Allow") => Effect::Allow,
        Some("Deny") => Effect::Deny,
        _ => return Err(malformed("Invalid effect")),
    };
    let principal = element(fields, "Principal", |value| principal(Some(value)))?;
    let actions = element(fields, "Action", |value| {
        strings(Some(value), "Action")?
            .into_iter()
            .map(|action| action_pattern(&action))
            .collect()
    })?;
    let resources = element(fields, "Resource", |value| {
        strings(Some(value), "Resource")?
            .into_iter()
            .map(|resource| resource_pattern(resource, bucket))
            .collect()
    })?;
    let conditions = match fields.get("Condition") {
        Some(block) => condition::parse(block, variables)?,
        None => Vec::new(),
    };
    Ok(Statement {
        effect,
        principal,
        actions,
        resources,
        conditions,
    })
}

/// The statement's `name` or `Not<name>` (exactly one of them), parsed.
fn element<T>(
    fields: &serde_json::Map<String, Value>,
    name: &str,
    parse: impl Fn(&Value) -> Result<T, S3Error>,
) -> Result<Element<T>, S3Error> {
    let not = format!("Not{name}");
    match (fields.get(name), fields.get(&not)) {
        (Some(value), None) => Ok(Element {
            named: parse(value)?,
            inverted: false,
        }),
        (None, Some(value)) => Ok(Element {
            named: parse(value)?,
            inverted: true,
        }),
        (Some(_), Some(_)) => Err(malformed(format!(
            "A statement cannot have both {name} and {not}"
        ))),
        (None, None) if name == "Principal" => Err(malformed("Invalid principal in policy")),
        (None, None) => Err(malformed(format!("Missing required field {name}"))),
    }
}

/// A lower-cased `s3:` action pattern.
fn action_pattern(action: &str) -> Result<String, S3Error> {
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
}

/// A resource pattern, which must be within `bucket`.
fn resource_pattern(resource: String, bucket: &str) -> Result<String, S3Error> {
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
mod tests;
