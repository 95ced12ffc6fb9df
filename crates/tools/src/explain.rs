//! audit2why's verdict for a denial, from the security server's reasons.
