//! S3 access control lists: the canned ACLs, the `x-amz-grant-*` headers
//! and the AccessControlPolicy document, all read into one [`Acl`] and
//! stored as its canonical AccessControlPolicy XML.
//!
//! Grantees are canonical user ids (see [`super::owner`]) or the two
//! groups that matter for access, AllUsers and AuthenticatedUsers (the
//! LogDelivery group is kept and shown but grants nothing here: we write
//! no access logs into buckets). Grants by e-mail address are refused:
//! we have no e-mail addresses to match.

use http::HeaderMap;
use serde::{Deserialize, Serialize};

use super::owner;
use crate::error::{Code, S3Error};
use crate::xml::{self, S3_NAMESPACE};

pub const ALL_USERS: &str = "http://acs.amazonaws.com/groups/global/AllUsers";
pub const AUTHENTICATED_USERS: &str = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
pub const LOG_DELIVERY: &str = "http://acs.amazonaws.com/groups/s3/LogDelivery";
const XSI_NAMESPACE: &str = "http://www.w3.org/2001/XMLSchema-instance";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    Read,
    Write,
    ReadAcp,
    WriteAcp,
    FullControl,
}

impl Permission {
    const ALL: [Self; 5] = [
        Self::Read,
        Self::Write,
        Self::ReadAcp,
        Self::WriteAcp,
        Self::FullControl,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "READ",
            Self::Write => "WRITE",
            Self::ReadAcp => "READ_ACP",
            Self::WriteAcp => "WRITE_ACP",
            Self::FullControl => "FULL_CONTROL",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The `x-amz-grant-*` header that grants this permission.
    fn header(self) -> &'static str {
        match self {
            Self::Read => "x-amz-grant-read",
            Self::Write => "x-amz-grant-write",
            Self::ReadAcp => "x-amz-grant-read-acp",
            Self::WriteAcp => "x-amz-grant-write-acp",
            Self::FullControl => "x-amz-grant-full-control",
        }
    }

    /// Whether holding `self` gives `wanted` (FULL_CONTROL gives all).
    fn covers(self, wanted: Self) -> bool {
        self == wanted || self == Self::FullControl
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grantee {
    /// A canonical user id.
    User(String),
    /// A group, by its URI.
    Group(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub grantee: Grantee,
    pub permission: Permission,
}

/// Whom a request comes from, as an ACL sees it.
#[derive(Clone, Copy, Debug)]
pub struct Requester<'a> {
    /// The caller's canonical id; `None` for an anonymous request.
    pub canonical_id: Option<&'a str>,
}

/// An owner and the grants it made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acl {
    /// The owner's canonical id.
    pub owner: String,
    pub grants: Vec<Grant>,
}

impl Acl {
    /// S3's `private`: the owner has full control, nobody else anything.
    pub fn private(owner: &str) -> Self {
        Self {
            owner: owner.to_owned(),
            grants: vec![user_grant(owner, Permission::FullControl)],
        }
    }

    /// A canned ACL by its `x-amz-acl` name. `bucket_owner` is the canonical
    /// id of the bucket's owner, for the `bucket-owner-*` ACLs of objects.
    pub fn canned(name: &str, owner: &str, bucket_owner: &str) -> Result<Self, S3Error> {
        let group = |uri: &str, permission| Grant {
            grantee: Grantee::Group(uri.to_owned()),
            permission,
        };
        let extra = match name {
            "private" => vec![],
            "public-read" => vec![group(ALL_USERS, Permission::Read)],
            "public-read-write" => vec![
                group(ALL_USERS, Permission::Read),
                group(ALL_USERS, Permission::Write),
            ],
            "authenticated-read" => vec![group(AUTHENTICATED_USERS, Permission::Read)],
            "bucket-owner-read" if bucket_owner != owner => {
                vec![user_grant(bucket_owner, Permission::Read)]
            }
            "bucket-owner-full-control" if bucket_owner != owner => {
                vec![user_grant(bucket_owner, Permission::FullControl)]
            }
            "bucket-owner-read" | "bucket-owner-full-control" => vec![],
            "log-delivery-write" => vec![
                group(LOG_DELIVERY, Permission::Write),
                group(LOG_DELIVERY, Permission::ReadAcp),
            ],
            _ => {
                return Err(
                    S3Error::invalid_argument("The ACL you provided is not valid")
                        .with("ArgumentName", "x-amz-acl")
                        .with("ArgumentValue", name),
                );
            }
        };
        // Listed before the owner's grant, as RGW lists them (s3-tests
        // depends on the order).
        let mut grants = extra;
        grants.extend(Self::private(owner).grants);
        Ok(Self {
            owner: owner.to_owned(),
            grants,
        })
    }

    /// Whether a write's headers ask for an ACL at all (`x-amz-acl` or any
    /// `x-amz-grant-*`), which the decision needs before they are parsed.
    pub fn requested(headers: &HeaderMap) -> bool {
        headers.contains_key("x-amz-acl")
            || Permission::ALL
                .into_iter()
                .any(|permission| headers.contains_key(permission.header()))
    }

    /// The ACL a write's headers ask for: `x-amz-acl`, or `x-amz-grant-*`
    /// (which replace the owner's implicit full control, as in S3), or
    /// `None` when the request names no ACL. Both at once is refused.
    pub fn from_headers(
        headers: &HeaderMap,
        owner: &str,
        bucket_owner: &str,
    ) -> Result<Option<Self>, S3Error> {
        let canned = header_text(headers, "x-amz-acl")?;
        let mut grants = Vec::new();
        for permission in Permission::ALL {
            for value in headers.get_all(permission.header()) {
                let text = value.to_str().map_err(|_| {
                    S3Error::invalid_argument("A grant header is not ASCII")
                        .with("ArgumentName", permission.header())
                })?;
                for grantee in text.split(',').filter(|g| !g.trim().is_empty()) {
                    grants.push(Grant {
                        grantee: grant_header_grantee(grantee.trim())?,
                        permission,
                    });
                }
            }
        }
        match (canned, grants.is_empty()) {
            (Some(_), false) => Err(S3Error::invalid_request(
                "Specifying both Canned ACLs and Header Grants is not allowed",
            )),
            (Some(name), true) => Self::canned(name.trim(), owner, bucket_owner).map(Some),
            (None, false) => Ok(Some(Self {
                owner: owner.to_owned(),
                grants,
            })),
            (None, true) => Ok(None),
        }
    }

    /// Parses an AccessControlPolicy document. Its owner must be `owner`:
    /// an ACL cannot give the resource away.
    pub fn from_xml(body: &[u8], owner: &str) -> Result<Self, S3Error> {
        let document: AccessControlPolicy = xml::from_xml(body)?;
        let stated_owner = document.owner.as_ref().map(|o| o.id.as_str());
        if stated_owner.unwrap_or_default() != owner {
            return Err(S3Error::access_denied());
        }
        Self::from_document(document)
    }

    /// Reads an ACL this gateway stored (see [`Self::to_xml`]), in one parse.
    pub fn from_stored(bytes: &[u8]) -> Result<Self, S3Error> {
        let corrupt = |_| S3Error::internal("a stored ACL does not parse");
        Self::from_document(xml::from_xml(bytes).map_err(corrupt)?).map_err(corrupt)
    }

    /// The ACL of a parsed document, owned by the owner it states.
    fn from_document(document: AccessControlPolicy) -> Result<Self, S3Error> {
        let owner = document.owner.map(|o| o.id).unwrap_or_default();
        let mut grants = Vec::new();
        for grant in document.access_control_list.grants {
            let permission = Permission::from_name(&grant.permission).ok_or_else(malformed_acl)?;
            let grantee = match (grant.grantee.id, grant.grantee.uri, grant.grantee.email) {
                (_, _, Some(_)) => return Err(email_refused()),
                (Some(id), None, None) => Grantee::User(checked_user(&id)?),
                (None, Some(uri), None) => Grantee::Group(checked_group(&uri)?),
                _ => return Err(malformed_acl()),
            };
            grants.push(Grant {
                grantee,
                permission,
            });
        }
        Ok(Self { owner, grants })
    }

    /// The AccessControlPolicy document, as GetBucketAcl/GetObjectAcl
    /// answer and as it is stored. Display names are the canonical ids:
    /// an ACL does not know the access keys behind them.
    pub fn to_xml(&self) -> Result<String, S3Error> {
        let grants = self
            .grants
            .iter()
            .map(|grant| {
                let (kind, id, uri) = match &grant.grantee {
                    Grantee::User(id) => ("CanonicalUser", Some(id.clone()), None),
                    Grantee::Group(uri) => ("Group", None, Some(uri.clone())),
                };
                GrantXml {
                    grantee: GranteeXml {
                        xmlns_xsi: Some(XSI_NAMESPACE.into()),
                        xsi_type: Some(kind.into()),
                        display_name: id.clone(),
                        id,
                        uri,
                        email: None,
                    },
                    permission: grant.permission.name().into(),
                }
            })
            .collect();
        let document = AccessControlPolicy {
            xmlns: Some(S3_NAMESPACE.into()),
            owner: Some(OwnerXml {
                display_name: Some(self.owner.clone()),
                id: self.owner.clone(),
            }),
            access_control_list: AccessControlList { grants },
        };
        xml::to_xml("AccessControlPolicy", &document)
    }

    /// Whether `who` holds `wanted`. The owner always holds READ_ACP and
    /// WRITE_ACP (S3: an owner can always read and fix its ACL). Group
    /// grants count only when `public_grants` is true (the
    /// IgnorePublicAcls switch turns them off).
    pub fn allows(&self, who: Requester<'_>, wanted: Permission, public_grants: bool) -> bool {
        if who.canonical_id == Some(self.owner.as_str())
            && matches!(wanted, Permission::ReadAcp | Permission::WriteAcp)
        {
            return true;
        }
        self.grants.iter().any(|grant| {
            grant.permission.covers(wanted)
                && match &grant.grantee {
                    Grantee::User(id) => who.canonical_id == Some(id.as_str()),
                    Grantee::Group(uri) if uri == ALL_USERS => public_grants,
                    Grantee::Group(uri) if uri == AUTHENTICATED_USERS => {
                        public_grants && who.canonical_id.is_some()
                    }
                    Grantee::Group(_) => false,
                }
        })
    }

    /// Whether the ACL grants anything to AllUsers or AuthenticatedUsers
    /// (what BlockPublicAcls refuses).
    pub fn is_public(&self) -> bool {
        self.grants.iter().any(|grant| {
            matches!(&grant.grantee, Grantee::Group(uri)
                if uri == ALL_USERS || uri == AUTHENTICATED_USERS)
        })
    }
}

fn user_grant(id: &str, permission: Permission) -> Grant {
    Grant {
        grantee: Grantee::User(id.to_owned()),
        permission,
    }
}

fn header_text<'a>(headers: &'a HeaderMap, name: &'static str) -> Result<Option<&'a str>, S3Error> {
    headers
        .get(name)
        .map(|value| {
            value.to_str().map_err(|_| {
                S3Error::invalid_argument("The ACL you provided is not valid")
                    .with("ArgumentName", name)
            })
        })
        .transpose()
}

/// One grantee of an `x-amz-grant-*` header: `id="..."`, `uri="..."` or
/// `emailAddress="..."` (refused).
fn grant_header_grantee(text: &str) -> Result<Grantee, S3Error> {
    let bad = || {
        S3Error::invalid_argument("A grant header names no valid grantee")
            .with("ArgumentValue", text)
    };
    let (kind, value) = text.split_once('=').ok_or_else(bad)?;
    let value = value.trim().trim_matches('"');
    match kind.trim().to_ascii_lowercase().as_str() {
        "id" => Ok(Grantee::User(checked_user(value)?)),
        "uri" => Ok(Grantee::Group(checked_group(value)?)),
        "emailaddress" => Err(email_refused()),
        _ => Err(bad()),
    }
}

fn checked_user(id: &str) -> Result<String, S3Error> {
    if owner::is_canonical_id(id) {
        Ok(id.to_owned())
    } else {
        Err(S3Error::invalid_argument("Invalid id")
            .with("ArgumentName", "CanonicalUser/ID")
            .with("ArgumentValue", id))
    }
}

fn checked_group(uri: &str) -> Result<String, S3Error> {
    if [ALL_USERS, AUTHENTICATED_USERS, LOG_DELIVERY].contains(&uri) {
        Ok(uri.to_owned())
    } else {
        Err(S3Error::invalid_argument("Invalid group uri")
            .with("ArgumentName", "Group/URI")
            .with("ArgumentValue", uri))
    }
}

fn malformed_acl() -> S3Error {
    S3Error::new(
        Code::MalformedACLError,
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
}

fn email_refused() -> S3Error {
    S3Error::new(
        Code::UnresolvableGrantByEmailAddress,
        "The e-mail address you provided does not match any account on record: \
         this gateway grants by canonical user id or group URI only",
    )
}

// ---- the AccessControlPolicy document ----

#[derive(Debug, Serialize, Deserialize)]
struct AccessControlPolicy {
    #[serde(rename = "@xmlns", skip_serializing_if = "Option::is_none", default)]
    xmlns: Option<String>,
    #[serde(rename = "Owner", default)]
    owner: Option<OwnerXml>,
    #[serde(rename = "AccessControlList", default)]
    access_control_list: AccessControlList,
}

#[derive(Debug, Serialize, Deserialize)]
struct OwnerXml {
    #[serde(rename = "ID")]
    id: String,
    #[serde(
        rename = "DisplayName",
        skip_serializing_if = "Option::is_none",
        default
    )]
    display_name: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct AccessControlList {
    #[serde(rename = "Grant", default)]
    grants: Vec<GrantXml>,
}

#[derive(Debug, Serialize, Deserialize)]
struct GrantXml {
    #[serde(rename = "Grantee")]
    grantee: GranteeXml,
    #[serde(rename = "Permission")]
    permission: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct GranteeXml {
    #[serde(
        rename = "@xmlns:xsi",
        skip_serializing_if = "Option::is_none",
        default
    )]
    xmlns_xsi: Option<String>,
    #[serde(rename = "@xsi:type", skip_serializing_if = "Option::is_none", default)]
    xsi_type: Option<String>,
    #[serde(rename = "ID", skip_serializing_if = "Option::is_none", default)]
    id: Option<String>,
    #[serde(
        rename = "DisplayName",
        skip_serializing_if = "Option::is_none",
        default
    )]
    display_name: Option<String>,
    #[serde(rename = "URI", skip_serializing_if = "Option::is_none", default)]
    uri: Option<String>,
    #[serde(
        rename = "EmailAddress",
        skip_serializing_if = "Option::is_none",
        default
    )]
    email: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_headers;

    fn id(c: char) -> String {
        c.to_string().repeat(64)
    }

    #[test]
    fn canned_acls_grant_what_s3_documents() {
        let (me, them) = (id('a'), id('b'));
        let public = Acl::canned("public-read", &me, &me).unwrap();
        let anonymous = Requester { canonical_id: None };
        let stranger = Requester {
            canonical_id: Some(&them),
        };
        assert!(public.allows(anonymous, Permission::Read, true));
        assert!(!public.allows(anonymous, Permission::Read, false));
        assert!(!public.allows(anonymous, Permission::Write, true));
        assert!(public.is_public());
        let authenticated = Acl::canned("authenticated-read", &me, &me).unwrap();
        assert!(!authenticated.allows(anonymous, Permission::Read, true));
        assert!(authenticated.allows(stranger, Permission::Read, true));
        let private = Acl::canned("private", &me, &me).unwrap();
        assert!(!private.allows(stranger, Permission::Read, true));
        assert!(!private.is_public());
        let shared = Acl::canned("bucket-owner-full-control", &me, &them).unwrap();
        assert!(shared.allows(stranger, Permission::Write, true));
        assert_eq!(
            Acl::canned("everyone", &me, &me).unwrap_err().code,
            "InvalidArgument"
        );
    }

    #[test]
    fn grant_headers_replace_the_canned_default() {
        let (me, them) = (id('a'), id('b'));
        let headers = test_headers(&[
            (
                "x-amz-grant-read",
                &format!("id=\"{them}\", uri=\"{ALL_USERS}\""),
            ),
            ("x-amz-grant-write-acp", &format!("id={them}")),
        ]);
        let acl = Acl::from_headers(&headers, &me, &me).unwrap().unwrap();
        assert_eq!(acl.grants.len(), 3);
        assert!(acl.is_public());
        let stranger = Requester {
            canonical_id: Some(&them),
        };
        assert!(acl.allows(stranger, Permission::WriteAcp, true));
        assert!(!acl.allows(stranger, Permission::Write, true));
        let grant = format!("id={them}");
        let both = test_headers(&[("x-amz-acl", "private"), ("x-amz-grant-read", &grant)]);
        assert_eq!(
            Acl::from_headers(&both, &me, &me).unwrap_err().code,
            "InvalidRequest"
        );
        let email = test_headers(&[("x-amz-grant-read", "emailAddress=\"a@b.c\"")]);
        assert_eq!(
            Acl::from_headers(&email, &me, &me).unwrap_err().code,
            "UnresolvableGrantByEmailAddress"
        );
        assert!(
            Acl::from_headers(&HeaderMap::new(), &me, &me)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn the_document_round_trips_and_keeps_its_owner() {
        let (me, them) = (id('a'), id('b'));
        let mut acl = Acl::canned("public-read-write", &me, &me).unwrap();
        acl.grants.push(user_grant(&them, Permission::ReadAcp));
        let text = acl.to_xml().unwrap();
        assert!(text.contains(r#"xsi:type="CanonicalUser""#), "{text}");
        assert_eq!(Acl::from_xml(text.as_bytes(), &me).unwrap(), acl);
        assert_eq!(Acl::from_stored(text.as_bytes()).unwrap(), acl);
        assert_eq!(
            Acl::from_xml(text.as_bytes(), &them).unwrap_err().code,
            "AccessDenied"
        );
        let bad = text.replace("READ_ACP", "READ_SOME");
        assert_eq!(
            Acl::from_xml(bad.as_bytes(), &me).unwrap_err().code,
            "MalformedACLError"
        );
        assert_eq!(
            Acl::from_xml(b"<AccessControlPolicy><Owner>", &me)
                .unwrap_err()
                .code,
            "MalformedXML"
        );
    }

    #[test]
    fn owners_always_hold_the_acl_permissions() {
        let me = id('a');
        let acl = Acl {
            owner: me.clone(),
            grants: vec![],
        };
        let owner = Requester {
            canonical_id: Some(&me),
        };
        assert!(acl.allows(owner, Permission::WriteAcp, false));
        assert!(!acl.allows(owner, Permission::Read, false));
    }
}
