"""Request bodies read strictly: small, in time, JSON of exactly the fields a route takes."""
