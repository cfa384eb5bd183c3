from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import User


@admin.register(User)
class CrispUserAdmin(UserAdmin):
    fieldsets = (*UserAdmin.fieldsets, ("Crisp", {"fields": ("display_name", "language")}))
    list_display = ("username", "display_name", "email", "language", "is_staff", "date_joined")
