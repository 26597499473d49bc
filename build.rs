//! Rebuilds spider when a migration is added or changed: `sqlx::migrate!`
//! embeds the `migrations/` folders at compile time, and cargo does not
//! otherwise know to look there.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
