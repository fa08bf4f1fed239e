"""Request and answer shapes of the JSON API, one module per concern; every field carries a description,
which /docs shows. Routes validate with them; services return plain data that fits them."""
