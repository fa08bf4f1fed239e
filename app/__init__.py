"""The web app: thin FastAPI routes over the services in app.services."""
