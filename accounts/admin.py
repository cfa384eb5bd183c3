from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from accounts import services
from accounts.models import ApiToken, User


@admin.register(User)
class CrispUserAdmin(UserAdmin):
    fieldsets = (*UserAdmin.fieldsets, (_("Profile"), {"fields": ("display_name", "language")}))
    list_display = (
        "username",
        "display_name",
        "email",
        "language",
        "is_staff",
        "is_guest",
        "date_joined",
    )
    list_filter = (*UserAdmin.list_filter, "is_guest")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Staff can see and revoke tokens; creating them is the owner's business (the key is
    shown only to whoever creates it)."""

    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("user", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    exclude = ("key_hash",)
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description=_("Revoke the selected tokens"), permissions=["change"])
    def revoke(self, request, queryset):
        count = 0
        for token in queryset.filter(revoked_at__isnull=True):
            services.token_revoke(token=token)
            count += 1
        self.message_user(
            request,
            ngettext("%(count)d token revoked.", "%(count)d tokens revoked.", count)
            % {"count": count},
            messages.SUCCESS,
        )
