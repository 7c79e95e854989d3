using System;

// Unity's and Xamarin's AOT compilers (IL2CPP, Mono full AOT) look for an
// attribute of this name on every method native code calls back into; they
// match it by name, so a host without UnityEngine gets this one.
#if !UNITY_5_3_OR_NEWER
namespace AOT
{
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type type) { Type = type; }
        public Type Type { get; private set; }
    }
}
#endif
