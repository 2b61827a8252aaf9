//! How a metadata role is declared: one [`metadata_role!`] per role file
//! makes the trait every back end implements, the cache's decorator
//! ([`super::CachedMetadata`]) implementing it, and the facade's
//! method for each call the gateway makes as it is. So a new call is its
//! line in the role, its two back ends and its conformance case: the
//! decorator and the facade follow from the line.
//!
//! Each call ends in `=> exposure, effect;`:
//!
//! - exposure: `facade` (a [`super::MetadataFacade`] method of the same
//!   name and signature, documented by the call's own doc comment, which
//!   the gateway calls on [`crate::Storage`]) or `internal`
//!   (the facade composes it with other calls, or the back end's own code
//!   calls it);
//! - effect, what the call is to the cache: `pass` (nothing: the back end
//!   answers), `forgets_object(name)` (a write to the object `name`, an
//!   [`super::ObjectName`] made from the arguments before the call: the
//!   lookup cache forgets it after the back end returns, whatever the
//!   outcome), `forgets_objects(names)` (the same for each of an iterator
//!   of them), `forgets_bucket(name)` (the same for a bucket's facts, by
//!   the name it is kept under), or `custom(method)` (the decorator's
//!   method of that name, with the same arguments, answers: the cached
//!   reads and the credential writes, in `metadata/mod.rs`).
//!
//! Arguments are written `name: Type` without a trailing comma, which is
//! all the declaration parses.

/// Declares a role; see the module's documentation.
macro_rules! metadata_role {
    (
        $(#[$role_attr:meta])*
        $vis:vis trait $role:ident {
            $(
                $(#[$attr:meta])*
                async fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty
                    => $exposure:ident, $effect:ident $(($($effect_arg:tt)*))?;
            )*
        }
    ) => {
        $(#[$role_attr])*
        #[::async_trait::async_trait]
        $vis trait $role: Send + Sync {
            $(
                $(#[$attr])*
                async fn $name(&self $(, $arg: $ty)*) -> $ret;
            )*
        }

        #[::async_trait::async_trait]
        impl $role for $crate::metadata::CachedMetadata {
            $(
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    $crate::metadata::role::cache_effect!(
                        self, $name, ($($arg),*), $effect $(($($effect_arg)*))?
                    )
                }
            )*
        }

        $(
            $crate::metadata::role::facade_method!(
                $exposure; $(#[$attr])* $name($($arg: $ty),*) -> $ret
            );
        )*
    };
}

/// The decorator's body of one call (see the module's documentation).
macro_rules! cache_effect {
    ($this:ident, $name:ident, ($($arg:ident),*), pass) => {
        $this.inner().$name($($arg),*).await
    };
    ($this:ident, $name:ident, ($($arg:ident),*), forgets_object($($object:tt)*)) => {{
        let forget: $crate::refs::ObjectName = $($object)*;
        let result = $this.inner().$name($($arg),*).await;
        $this.wrote_object(&forget);
        result
    }};
    ($this:ident, $name:ident, ($($arg:ident),*), forgets_objects($($objects:tt)*)) => {{
        let forget: ::std::vec::Vec<$crate::refs::ObjectName> = ($($objects)*).collect();
        let result = $this.inner().$name($($arg),*).await;
        for object in &forget {
            $this.wrote_object(object);
        }
        result
    }};
    ($this:ident, $name:ident, ($($arg:ident),*), forgets_bucket($($bucket:tt)*)) => {{
        let forget: ::std::string::String = ($($bucket)*).into();
        let result = $this.inner().$name($($arg),*).await;
        $this.wrote_bucket(&forget);
        result
    }};
    ($this:ident, $name:ident, ($($arg:ident),*), custom($method:ident)) => {
        $this.$method($($arg),*).await
    };
}

/// The facade's method for a `facade` call; nothing for an `internal` one.
macro_rules! facade_method {
    (facade; $(#[$attr:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        impl $crate::metadata::MetadataFacade {
            $(#[$attr])*
            pub async fn $name(&self $(, $arg: $ty)*) -> $ret {
                self.roles().$name($($arg),*).await
            }
        }
    };
    (internal; $($call:tt)*) => {};
}

pub(crate) use {cache_effect, facade_method, metadata_role};
