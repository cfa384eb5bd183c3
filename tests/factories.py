"""factory_boy factories shared by the whole test suite. Add yours below."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

DEFAULT_PASSWORD = "correct-horse-battery-staple"


class UserFactory(factory.django.DjangoModelFactory):
    """A registered person. Log in with `DEFAULT_PASSWORD` (or pass `password=`)."""

    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"player{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    display_name = ""
    language = "en"
    password = DEFAULT_PASSWORD

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        # create_user hashes the password (with the fast test hasher).
        return cls._get_manager(model_class).create_user(*args, **kwargs)
