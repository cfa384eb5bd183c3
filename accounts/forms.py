"""Web forms: they validate input; the services in `accounts/services.py` do the writing."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiToken, User


class SignUpForm(UserCreationForm):
    """Username, optional email, password twice. `save()` is not used: the view calls
    `user_create`, so the service's rules hold for every way in."""

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["email"].required = False
        self.fields["email"].help_text = _("Optional. Only used to send you a password-reset link.")
        self.fields["username"].widget.attrs["autocomplete"] = "username"
        self.fields["email"].widget.attrs["autocomplete"] = "email"


class ProfileForm(forms.Form):
    display_name = forms.CharField(
        label=_("Display name"),
        max_length=User._meta.get_field("display_name").max_length,
        required=False,
        help_text=_("What other players see at the table. Empty: your username."),
    )
    language = forms.ChoiceField(
        label=_("Preferred language"),
        choices=User.Language.choices,
        help_text=_("The site switches to it whenever you log in."),
    )
    email = forms.EmailField(
        label=_("Email address"),
        required=False,
        help_text=_("Optional. Only used to send you a password-reset link."),
    )


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        label=_("Token name"),
        max_length=ApiToken._meta.get_field("name").max_length,
        help_text=_("Something to recognise it by, e.g. “my bot” or “phone app”."),
    )
