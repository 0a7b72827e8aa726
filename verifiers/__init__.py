"""The paper specification (claims) and everything that checks code against it."""
