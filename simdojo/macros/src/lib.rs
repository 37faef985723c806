//! Derives for simdojo's typed component parameters (re-exported as `simdojo::Params`
//! and `simdojo::ParamChoice`; see `simdojo::params` for the traits they implement).
//!
//! `#[derive(Params)]` on a struct with named fields implements
//! `simdojo::params::ParamSet`: one `ParamSpec` per field (its name, the field type's
//! kind, the default, the doc comment, the unit, the accepted range), `from_params`
//! (each value converted to the field's type and checked against its range, then the
//! struct's cross-field check) and `estimate` (the host memory the component will
//! allocate). Field attributes, all optional:
//!
//! ```text
//! /// Capacity of the cache.                  <- the parameter's doc (required)
//! #[param(default = Bytes::mib(4),           <- an expression of the field's type
//!         unit = "bytes",
//!         range = 1..=(1 << 40),             <- inclusive; in the kind's base unit
//!         power_of_two,                      <- the value must be a power of two
//!         name = "size")]                    <- the parameter's name (default: the field's)
//! size: Bytes,
//! ```
//!
//! Struct attribute: `#[params(check = path, estimate = path)]`, where `check` is a
//! `fn(&Self) -> Result<(), ParamError>` naming the offending parameter and `estimate`
//! a `fn(&Self) -> u64` (bytes).
//!
//! `#[derive(ParamChoice)]` on an enum of unit variants implements
//! `simdojo::params::ParamChoice` and `ParamType`: the choices are the variant names in
//! lowercase (`Lru` is `"lru"`), or `#[choice(name = "...")]`.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::spanned::Spanned;
use syn::{parse_macro_input, Data, DeriveInput, Expr, Fields, LitStr, Path, RangeLimits, Type};

/// Derives `simdojo::params::ParamSet` (see the crate docs).
#[proc_macro_derive(Params, attributes(param, params))]
pub fn derive_params(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    params(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `simdojo::params::ParamChoice` and `ParamType` (see the crate docs).
#[proc_macro_derive(ParamChoice, attributes(choice))]
pub fn derive_param_choice(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    choice(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// The doc comment of an item, its lines trimmed and joined by spaces.
fn doc_of(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value {
                let line = s.value();
                let line = line.trim();
                if !line.is_empty() {
                    lines.push(line.to_string());
                }
            }
        }
    }
    lines.join(" ")
}

/// The last path segment's name of a type (`String` for `std::string::String`).
fn type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

struct FieldSpec {
    ident: syn::Ident,
    ty: Type,
    name: String,
    doc: String,
    default: Option<Expr>,
    unit: String,
    range: Option<(Option<Expr>, Option<Expr>)>,
    power_of_two: bool,
}

fn field_spec(field: &syn::Field) -> syn::Result<FieldSpec> {
    let ident = field.ident.clone().ok_or_else(|| syn::Error::new(field.span(), "Params needs named fields"))?;
    let mut spec = FieldSpec {
        name: ident.to_string().trim_start_matches("r#").to_string(),
        ident,
        ty: field.ty.clone(),
        doc: doc_of(&field.attrs),
        default: None,
        unit: String::new(),
        range: None,
        power_of_two: false,
    };
    if spec.doc.is_empty() {
        return Err(syn::Error::new(field.span(), "a parameter needs a doc comment: it is the parameter's documentation"));
    }
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("param")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("default") {
                spec.default = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("unit") {
                spec.unit = meta.value()?.parse::<LitStr>()?.value();
            } else if meta.path.is_ident("name") {
                spec.name = meta.value()?.parse::<LitStr>()?.value();
            } else if meta.path.is_ident("power_of_two") {
                spec.power_of_two = true;
            } else if meta.path.is_ident("range") {
                let expr: Expr = meta.value()?.parse()?;
                let Expr::Range(r) = expr else {
                    return Err(meta.error("`range` takes a range: `A..=B`, `A..` or `..=B`"));
                };
                if r.end.is_some() && matches!(r.limits, RangeLimits::HalfOpen(_)) {
                    return Err(meta.error("`range` bounds are inclusive: write `A..=B`"));
                }
                spec.range = Some((r.start.map(|e| *e), r.end.map(|e| *e)));
            } else {
                return Err(meta.error("expected `default`, `unit`, `range`, `power_of_two` or `name`"));
            }
            Ok(())
        })?;
    }
    Ok(spec)
}

fn params(input: &DeriveInput) -> syn::Result<Tokens> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(input.span(), "Params derives for a struct with named fields"));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new(input.span(), "Params derives for a struct with named fields"));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(input.generics.span(), "Params does not derive for generic structs"));
    }
    let mut check: Option<Path> = None;
    let mut estimate: Option<Path> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("params")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("check") {
                check = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("estimate") {
                estimate = Some(meta.value()?.parse()?);
            } else {
                return Err(meta.error("expected `check` or `estimate`"));
            }
            Ok(())
        })?;
    }
    let specs: Vec<FieldSpec> = fields.named.iter().map(field_spec).collect::<syn::Result<_>>()?;
    let p = quote!(::simdojo::params);
    let mut spec_tokens = Vec::new();
    let mut field_inits = Vec::new();
    let mut field_sets = Vec::new();
    for (i, f) in specs.iter().enumerate() {
        let ty = &f.ty;
        let (name, doc, unit, pow2) = (&f.name, &f.doc, &f.unit, f.power_of_two);
        let is_float = type_name(ty).as_deref() == Some("f64");
        let default = match &f.default {
            None => quote!(::core::option::Option::None),
            Some(expr) => {
                let value = if type_name(ty).as_deref() == Some("String") {
                    quote!(::std::string::String::from(#expr))
                } else {
                    quote!(#expr)
                };
                quote!(::core::option::Option::Some({
                    fn default_value() -> #p::ParamValue {
                        let value: #ty = #value;
                        <#ty as #p::ParamType>::to_value(&value)
                    }
                    default_value as fn() -> #p::ParamValue
                }))
            }
        };
        let range = match &f.range {
            None => quote!(<#ty as #p::ParamType>::RANGE),
            Some((lo, hi)) => {
                let own = if is_float {
                    let lo = lo.as_ref().map_or(quote!(f64::NEG_INFINITY), |e| quote!((#e) as f64));
                    let hi = hi.as_ref().map_or(quote!(f64::INFINITY), |e| quote!((#e) as f64));
                    quote!(#p::ParamRange::Float { min: #lo, max: #hi })
                } else {
                    let lo = lo.as_ref().map_or(quote!(i128::MIN), |e| quote!((#e) as i128));
                    let hi = hi.as_ref().map_or(quote!(i128::MAX), |e| quote!((#e) as i128));
                    quote!(#p::ParamRange::Int { min: #lo, max: #hi })
                };
                quote!(#p::ParamRange::and(<#ty as #p::ParamType>::RANGE, #own))
            }
        };
        spec_tokens.push(quote! {
            #p::ParamSpec {
                name: #name,
                kind: <#ty as #p::ParamType>::KIND,
                default: #default,
                doc: #doc,
                unit: #unit,
                range: #range,
                power_of_two: #pow2,
            }
        });
        let ident = &f.ident;
        field_inits.push(quote!(#ident: params.typed::<#ty>(&Self::SPECS[#i])?));
        field_sets.push(quote!(params.set(#name, <#ty as #p::ParamType>::to_value(&self.#ident));));
    }
    let ident = &input.ident;
    let check_call = check.map(|c| quote!(#c(&value).map_err(|e| params.locate(e))?;));
    let estimate_body = match estimate {
        Some(e) => quote!(#e(self)),
        None => quote!(0),
    };
    Ok(quote! {
        impl #p::ParamSet for #ident {
            const SPECS: &'static [#p::ParamSpec] = &[#(#spec_tokens),*];
            fn from_params(params: &#p::Params) -> ::core::result::Result<Self, #p::ParamError> {
                let value = #ident { #(#field_inits),* };
                #check_call
                ::core::result::Result::Ok(value)
            }
            fn estimate(&self) -> u64 {
                #estimate_body
            }
            fn to_params(&self) -> #p::Params {
                let mut params = #p::Params::new();
                #(#field_sets)*
                params
            }
        }
    })
}

fn choice(input: &DeriveInput) -> syn::Result<Tokens> {
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new(input.span(), "ParamChoice derives for an enum of unit variants"));
    };
    let mut names = Vec::new();
    let mut variants = Vec::new();
    for v in &data.variants {
        if !matches!(v.fields, Fields::Unit) {
            return Err(syn::Error::new(v.span(), "ParamChoice variants carry no data"));
        }
        let mut name = v.ident.to_string().to_lowercase();
        for attr in v.attrs.iter().filter(|a| a.path().is_ident("choice")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    name = meta.value()?.parse::<LitStr>()?.value();
                    Ok(())
                } else {
                    Err(meta.error("expected `name`"))
                }
            })?;
        }
        names.push(name);
        variants.push(v.ident.clone());
    }
    if names.is_empty() {
        return Err(syn::Error::new(input.span(), "ParamChoice needs at least one variant"));
    }
    let ident = &input.ident;
    let p = quote!(::simdojo::params);
    Ok(quote! {
        impl #p::ParamChoice for #ident {
            const CHOICES: &'static [&'static str] = &[#(#names),*];
            fn name(&self) -> &'static str {
                match self { #(#ident::#variants => #names),* }
            }
            fn from_name(name: &str) -> ::core::option::Option<Self> {
                match name {
                    #(#names => ::core::option::Option::Some(#ident::#variants),)*
                    _ => ::core::option::Option::None,
                }
            }
        }
        impl #p::ParamType for #ident {
            const KIND: #p::ParamKind = #p::ParamKind::Choice;
            const RANGE: #p::ParamRange = #p::ParamRange::Choices(<#ident as #p::ParamChoice>::CHOICES);
            fn from_value(value: &#p::ParamValue) -> ::core::option::Option<Self> {
                match value {
                    #p::ParamValue::String(s) => <#ident as #p::ParamChoice>::from_name(s),
                    _ => ::core::option::Option::None,
                }
            }
            fn to_value(&self) -> #p::ParamValue {
                #p::ParamValue::String(::std::string::String::from(<#ident as #p::ParamChoice>::name(self)))
            }
        }
    })
}
